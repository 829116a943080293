"""Python models (``def model(dbt, session)``) on the embedded session: which connection
methods run them (methods), running a model's compiled program in this process and
taking its DataFrame (model_program), and the service (python_models_service) the
adapter's face hands Jinja's call to: it checks the DataFrame with the tenant guard and
puts it behind a temporary view the materialization's statements read.
docs/python_models.md.
Layer: may import tenancy/, engine/, common/, credentials.py.
"""
