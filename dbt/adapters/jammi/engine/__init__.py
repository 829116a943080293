"""Engine: the Spark session and what the engine does to us.

The embedded session (launch, Java, defaults), exact parameter bindings, Spark's error
messages, Hive/Thrift compatibility, Delta and Iceberg releases, Delta's replace,
relation listing that survives concurrent drops, version directories on the file system;
delta_replace_service is the service the adapter's face hands the Delta rebuild's plan
to.
Layer 1: may import common/ and credentials.py.
"""
