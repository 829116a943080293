# A Python table model: products per category, joined with the categories table.
# dbt.ref() reads a model as a Spark DataFrame (in a run bound to a tenant, scoped to that
# tenant's and the shared rows, like a SQL model's ref()); dbt.config() sets what a SQL
# model's config() would, and the table is written by the same SQL as a SQL model's.
from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(materialized="table")
    products = dbt.ref("products")
    categories = dbt.ref("categories")
    counts = products.groupBy("category").agg(
        F.count("*").alias("products"), F.min("price").alias("lowest_price")
    )
    return categories.join(counts, "category", "left").select(
        "category",
        "display_name",
        F.coalesce("products", F.lit(0)).alias("products"),
        "lowest_price",
    )
