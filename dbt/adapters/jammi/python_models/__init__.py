"""Python models (``def model(dbt, session)``) on the embedded session: which connection
methods run them (methods), running a model's compiled program in this process and
taking its DataFrame (model_program), and the Jinja-facing mixin that checks the
DataFrame with the tenant guard, puts it behind a temporary view and runs the
materialization's statements over it (python_models_adapter). docs/python_models.md.
Layer: may import tenancy/, engine/, common/, credentials.py.
"""
