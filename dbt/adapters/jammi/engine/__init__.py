"""Engine: the Spark session and what the engine does to us.

The embedded session (launch, Java, defaults), exact parameter bindings, Spark's error
messages, Hive/Thrift compatibility, Delta and Iceberg releases, Delta's replace,
relation listing that survives concurrent drops, version directories on the file system;
engine_adapter is the Jinja side (the Delta replace).
Layer 1: may import common/ and credentials.py.
"""
