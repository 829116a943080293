"""Tenancy: the tenant binding's read guard.

bound_statement owns the decision for every statement of a bound run, as a pipeline:
analyze (statement_plans asks Spark; the plan readers plan_text, plan_jvm and
merge_operands reduce its answer to a plan.PlanNode), decide (plan's rule, the guard's
state: tenant, trust, which tables are tenant-scoped), rewrite (scope_references),
verify. tenancy_service is the service the adapter's face (impl.py) hands Jinja's calls
to.
Layer 2: may import engine/, common/, credentials.py.
"""
