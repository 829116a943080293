"""Topic: the append-only, offset-numbered event log.

Registration (the topics registry), staging and row numbering of a batch, the publish
commit (offset claim), consumers' reads and metadata cache, the live tail;
registry_service and topic_service are the services the adapter's face (impl.py) hands
the topic macros' calls to.
Layer 3: may import tenancy/, engine/, common/, credentials.py.
"""
