from dbt.adapters.base import AdapterPlugin
from dbt.include import jammi

from dbt.adapters.jammi.connections import JammiConnectionManager  # noqa: F401
from dbt.adapters.jammi.credentials import JammiCredentials
from dbt.adapters.jammi.impl import JammiAdapter

Plugin = AdapterPlugin(
    adapter=JammiAdapter,  # type: ignore[arg-type]
    credentials=JammiCredentials,
    include_path=jammi.PACKAGE_PATH,
    dependencies=["spark"],
)
