"""Topic: the append-only, offset-numbered event log.

Registration (the topics registry), staging and row numbering of a batch, the publish
commit (offset claim), consumers' reads and metadata cache, the live tail; topic_adapter
is the one mixin the topic macros call.
Layer 3: may import tenancy/, engine/, common/, credentials.py.
"""
