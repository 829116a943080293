# A Python incremental model (append): each run appends the product changes newer than
# the newest one already logged. dbt.is_incremental and dbt.this work as in SQL models.
from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    changes = dbt.ref("product_changes").select("product_id", "price", "updated_at")
    if dbt.is_incremental:
        newest = session.sql(f"select max(updated_at) from {dbt.this}").collect()[0][0]
        if newest is not None:
            changes = changes.where(F.col("updated_at") > F.lit(newest))
    return changes
