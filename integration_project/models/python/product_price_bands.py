# A Python mutable_table: the DataFrame the model returns is the batch, applied by key
# with every rule and check of a SQL mutable_table (here: one row per product_id, and a
# change older than the stored row's updated_at loses).
from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(
        materialized="mutable_table", primary_key=["product_id"], version_column="updated_at"
    )
    budget_below = dbt.config.get("budget_below", 100)  # schema.yml sets it
    products = dbt.ref("products")
    band = (
        F.when(F.col("price") < budget_below, "budget")
        .when(F.col("price") < 200, "standard")
        .otherwise("premium")
    )
    return products.select("product_id", "name", "price", band.alias("band"), "updated_at")
