# Two entry points on a fresh machine:
#   make demo   build integration_project/ on the embedded Spark session
#   make test   the gate (at most 30 minutes on 2 cores): lint, unit, the functional
#               lane, and a slice of every other lane (docs/testing.md)
# Before an issue is resolved: make test-full (every lane), or make test-affected
# BASE=<rev> (the lanes of what changed since <rev>, scripts/lane_map.py).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
# A Delta or Iceberg lane whose format cannot load fails with the reason instead of
# passing with nothing run (`make jars` fetches both); set 0 to let it skip.
export JAMMI_DELTA_REQUIRED ?= 1
export JAMMI_ICEBERG_REQUIRED ?= 1

.PHONY: functional-gate cluster-lanes checks java-check jars iceberg-probe demo demo-delta demo-iceberg test test-full test-affected delta-gate iceberg-gate cluster-gate connect-gate crash-gate spark4-gate spark4-smoke spark4-types spark4-connect-smoke test-quick spark4-delta-types cluster-fault-lane lint unit functional delta-lane connect-lane thrift-lane thrift-delta-lane thrift-delta-lane-all thrift-iceberg-lane crash-lane iceberg-lane iceberg-rest-lane docs-browser bench clean spark4-lane spark4-unit spark4-functional spark4-demo spark4-thrift spark4-connect-lane spark4-delta-lane spark4-check spark4-venv spark4-features spark4-iceberg spark4-connect-check

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev,thrift,connect]"
	touch $(STAMP)

java-check: $(STAMP)
	@$(BIN)/python scripts/check_java.py

demo: $(STAMP)
	@$(MAKE) --no-print-directory java-check
	cd integration_project && ../$(BIN)/dbt build --profiles-dir . --project-dir .
	cd integration_project && ../$(BIN)/dbt run-operation expire_mutable_table --profiles-dir . \
	  --project-dir . --args '{table: sku_order_counters}'

# Delta's and Iceberg's Spark jars from Maven Central with mvn (scripts/fetch_jars.py;
# versions in dbt/adapters/jammi/engine/jar_releases.py): into the local Maven repository
# (~/.m2/repository), which Spark's spark.jars.packages resolver reads first, and copied
# into .jars/ (git-ignored) for spark.jars and --jars. Fetched once; quick afterwards.
jars: $(STAMP)
	@$(BIN)/python scripts/fetch_jars.py

# The integration project on an embedded session with Delta Lake, configured by Maven
# coordinates (spark.jars.packages in its profile's delta target) as README tells users,
# resolved from the local Maven repository `make jars` filled; JAMMI_DELTA_JARS (jar
# files) overrides them.
demo-delta: jars
	@$(MAKE) --no-print-directory java-check
	cd integration_project && $(if $(JAMMI_DELTA_JARS),JAMMI_DELTA_PACKAGES=) \
	  ../$(BIN)/dbt build --profiles-dir . --project-dir . --target delta

# The integration project on an embedded session with Iceberg's SparkSessionCatalog (its
# profile's iceberg target: Maven coordinates from the local repository `make jars` filled).
demo-iceberg: jars
	@$(MAKE) --no-print-directory java-check
	cd integration_project && ../$(BIN)/dbt build --profiles-dir . --project-dir . --target iceberg

lint: $(STAMP)
	$(BIN)/ruff check dbt tests bench scripts
	$(BIN)/ruff format --check dbt tests bench scripts
	$(BIN)/mypy dbt/adapters/jammi

unit: $(STAMP)
	$(BIN)/pytest tests/unit -q $(PYTEST_ARGS)

functional: $(STAMP)
	@$(MAKE) --no-print-directory java-check
	$(BIN)/pytest tests/functional -q -p no:cacheprovider --durations=10 $(PYTEST_ARGS)

# The gate's functional lane: tests/functional but for lane_map.FUNCTIONAL_FULL_ONLY.
functional-gate: $(STAMP)
	@$(MAKE) --no-print-directory java-check
	$(BIN)/pytest tests/functional -q -p no:cacheprovider --durations=10 \
	  $$($(BIN)/python scripts/lane_map.py ignores) $(PYTEST_ARGS)

delta-lane: jars
	@$(BIN)/python scripts/delta_lane.py

# The Iceberg path of the feature tests with file_format iceberg (Iceberg's
# SparkSessionCatalog on the embedded Hive metastore; scripts/iceberg_lane.py):
# JAMMI_ICEBERG_JARS (jar files) overrides the coordinates; JAMMI_ICEBERG_REQUIRED=1 fails
# where Iceberg does not load instead of skipping; part of `make test`.
# Then its catalog service slice: the sessions' default catalog an Iceberg REST catalog
# server from Maven (scripts/iceberg_rest_catalog.py; `make iceberg-rest-lane` alone).
iceberg-lane: jars
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/iceberg_lane.py
	@$(BIN)/python scripts/iceberg_lane.py --rest

iceberg-rest-lane: jars
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/iceberg_lane.py --rest

# Spark Thrift Server on loopback (from PySpark's own jars), integration_project with
# --target thrift, then the feature tests with method: thrift; see docs/connecting.md.
thrift-lane: $(STAMP)
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/thrift_server.py lane

# A Spark Connect server on loopback (local mode, from PySpark's jars plus, on Spark 3.5,
# the spark-connect artifact `make jars` fetches), integration_project with --target
# connect, then a slice of the feature tests and the Python model tests with method:
# connect (CONNECT_LANE_TESTS in scripts/connect_server.py), and two dbt processes racing
# over Connect (CONNECT_RACE_TESTS); then those races on Iceberg, on a Connect server whose
# default catalog is Iceberg's REST catalog server (--iceberg-rest); docs/connecting.md.
connect-lane: jars
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/connect_server.py lane --races
	@$(BIN)/python scripts/connect_server.py lane --iceberg-rest

# A Thrift server with Delta Lake (jars: JAMMI_DELTA_JARS, else .jars/ from `make jars`): the
# tests only a Delta server can show (DELTA_LANE_TESTS in scripts/thrift_server.py),
# with file_format delta; part of `make test`.
thrift-delta-lane: jars
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/thrift_server.py lane --delta

# A Thrift server (local mode) with Iceberg's SparkSessionCatalog (jars: JAMMI_ICEBERG_JARS,
# else .jars/ from `make jars`): two dbt processes racing on Iceberg tables and topics
# (ICEBERG_LANE_TESTS in scripts/thrift_lane.py); then the same races on a server whose
# default catalog is Iceberg's REST catalog server (--rest).
thrift-iceberg-lane: jars
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/thrift_server.py lane --iceberg --local
	@$(BIN)/python scripts/thrift_server.py lane --iceberg --rest --local

# Every feature test and the integration project on the Delta server (about 50 minutes
# on 2 cores; not in `make test`, which runs DELTA_LANE_TESTS in scripts/thrift_server.py).
thrift-delta-lane-all: jars
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/thrift_server.py lane --delta --all

# The full matrix's cluster lanes on one standalone cluster, one after another: the
# Thrift lane, the Delta Thrift lane and the cluster fault lane (scripts/thrift_server.py).
cluster-lanes: jars
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/thrift_server.py cluster-lanes

# Faults on the cluster's side (tests/process/test_cluster_faults.py): a standalone
# cluster on loopback, a worker SIGKILLed under a run and under a publish, the Thrift
# server SIGKILLed in a commit and restarted.
cluster-fault-lane: $(STAMP)
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/thrift_server.py faults

# Real dbt processes SIGKILLed at measured points of a run (tests/process, method:
# session); tests/process's Thrift races run inside thrift-lane. The tombstone crash
# test's Delta case loads Delta by Maven coordinates from the repository `make jars`
# fills (skipped when Delta cannot load; JAMMI_DELTA_REQUIRED=1 fails it instead).
crash-lane: jars
	@$(MAKE) --no-print-directory java-check
	$(BIN)/pytest tests/process -q -p no:cacheprovider -m "not thrift" --durations=5 $(PYTEST_ARGS)

# dbt docs generate + headless Chromium: cdc_orders' lineage shows publisher and consumers.
docs-browser: $(STAMP)
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/docs_lineage_check.py

# Every benchmark at ROWS rows (comma-separated sizes; default 1M), one table of our time
# against its same-process baseline; not part of `make test`. docs/performance.md.
ROWS ?= 1000000
bench: jars
	@$(MAKE) --no-print-directory java-check
	$(BIN)/python bench/run_all.py --rows $(ROWS)

# The lanes two at a time from one queue, longest first (scripts/test_lanes.py: each
# lane starts when one of the two running ends, so both cores stay busy to the end), each
# printed whole with its minutes in one summary. Which lanes: scripts/lane_map.py
# (GATE_LANES for `make test`, FULL_LANES for `make test-full`); LANES="a b" runs those
# instead. docs/testing.md says what each lane covers and its minutes.
LANES ?=
SLOTS ?= 2
test: jars
	@$(BIN)/python scripts/test_lanes.py --slots $(SLOTS) $(if $(strip $(LANES)),$(LANES),--gate)

test-full: jars
	@$(BIN)/python scripts/test_lanes.py --slots $(SLOTS) $(if $(strip $(LANES)),$(LANES),--full)

# The full lanes of what changed since BASE (a git revision; up to HEAD, a revision, when
# given, else the work tree), chosen by path (scripts/lane_map.py).
BASE ?= origin/main
test-affected: jars
	@$(BIN)/python scripts/lane_map.py lanes --run --slots $(SLOTS) --base $(BASE) \
	  $(if $(HEAD),--head $(HEAD))

# The gate's slices of the lanes (scripts/lane_map.py, GATE_SLICES).
delta-gate: jars
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/delta_lane.py --gate

iceberg-gate: jars
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/iceberg_lane.py --gate

# One standalone cluster: the Thrift slice over a server on it, then the fault slice.
cluster-gate: $(STAMP)
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/thrift_server.py gate

connect-gate: jars
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/connect_server.py lane --gate

crash-gate: jars
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/lane_map.py slice crash -m "not thrift"

checks: lint unit

# The inner loop (a few minutes): lint, unit, and one smoke test per materialization on
# the embedded session (tests marked `smoke`).
test-quick: lint unit
	@$(MAKE) --no-print-directory java-check
	$(BIN)/pytest tests/functional -q -p no:cacheprovider -m smoke $(PYTEST_ARGS)

# Spark 4 (docs/spark4.md): the same code in two more environments, each constraints.txt
# with the PySpark pins of constraints-spark4*.txt. `make test` runs spark4-check (below);
# the whole lane (about 50 minutes on 2 cores) runs nightly in CI
# (.github/workflows/spark4-lane.yml).
#   .venv-spark4        newest PySpark 4.x: unit, functional (dbt-tests-adapter suites
#                       included), the integration project, the Thrift lane
#   .venv-spark4-delta  PySpark 4.0.x with Delta Lake 4.0.1 (`make jars`): the Delta lane
SPARK4_VENV ?= .venv-spark4
SPARK4_DELTA_VENV ?= .venv-spark4-delta
SPARK4_ICEBERG_VENV ?= .venv-spark4-iceberg
S4 := $(SPARK4_VENV)/bin
S4D := $(SPARK4_DELTA_VENV)/bin
S4I := $(SPARK4_ICEBERG_VENV)/bin

# $(1): the environment's directory; $(2): the pins (PySpark, py4j, and what its Connect
# client needs) replacing those of constraints.txt.
define pinned_venv
	$(PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install --quiet --upgrade pip
	awk -F== 'NR==FNR { if ($$0 !~ /^#/ && NF == 2) pinned[$$1] = 1; next } !($$1 in pinned)' \
	  $(2) constraints.txt | cat - $(2) > $(1)/constraints.txt
	$(1)/bin/python -m pip install --quiet -c $(1)/constraints.txt -e ".[dev,thrift,connect]"
	touch $(1)/.installed
endef

$(SPARK4_VENV)/.installed: pyproject.toml constraints.txt constraints-spark4.txt
	$(call pinned_venv,$(SPARK4_VENV),constraints-spark4.txt)

$(SPARK4_DELTA_VENV)/.installed: pyproject.toml constraints.txt constraints-spark4-delta.txt
	$(call pinned_venv,$(SPARK4_DELTA_VENV),constraints-spark4-delta.txt)

$(SPARK4_ICEBERG_VENV)/.installed: pyproject.toml constraints.txt constraints-spark4-iceberg.txt
	$(call pinned_venv,$(SPARK4_ICEBERG_VENV),constraints-spark4-iceberg.txt)

spark4-unit: $(SPARK4_VENV)/.installed
	$(S4)/pytest tests/unit -q -p no:cacheprovider $(PYTEST_ARGS)

spark4-functional: $(SPARK4_VENV)/.installed
	@$(S4)/python scripts/check_java.py
	$(S4)/pytest tests/functional -q -rs -p no:cacheprovider $(PYTEST_ARGS)

# Its own session state (.spark-spark4): the 3.5 demo's tables stay where they are.
spark4-demo: $(SPARK4_VENV)/.installed
	@$(S4)/python scripts/check_java.py
	cd integration_project && JAMMI_SESSION_DIR=.spark-spark4 \
	  ../$(S4)/dbt build --profiles-dir . --project-dir . --target-path target-spark4

spark4-thrift: $(SPARK4_VENV)/.installed
	@$(S4)/python scripts/check_java.py
	@$(S4)/python scripts/thrift_server.py lane

spark4-delta-lane: $(SPARK4_DELTA_VENV)/.installed jars
	@$(S4D)/python scripts/check_java.py
	@$(S4D)/python scripts/delta_lane.py

# The connect lane on Spark 4 (PySpark 4.x bundles the Connect server), in the nightly
# spark4-lane; spark4-check (so `make test`) ends with its check: no integration-project
# build, only the lane's tests with a Spark-4-specific path (CHECK_MARKS in
# scripts/connect_server.py: the Connect client, Python models' DataFrames, plan readers,
# error conversion) and the smoke tests.
spark4-connect-lane: $(SPARK4_VENV)/.installed
	@$(S4)/python scripts/check_java.py
	@$(S4)/python scripts/connect_server.py lane

spark4-connect-check: $(SPARK4_VENV)/.installed
	@$(S4)/python scripts/check_java.py
	@$(S4)/python scripts/connect_server.py lane --check

spark4-lane:
	@$(PYTHON) scripts/lane_report.py spark4-unit spark4-functional spark4-demo spark4-thrift \
	  spark4-connect-lane spark4-delta-lane

# The Spark 4 check of every change (part of `make test`; docs/spark4.md): .venv-spark4
# (installed when missing), tests/unit, then the feature tests with a Spark-4-specific
# path (marked spark4_path) and one smoke test per materialization, on PySpark 4.3's
# embedded session, parquet, with ANSI on and asserted (JAMMI_TEST_ANSI,
# tests/conftest.py), then the same marks of the connect lane on a Spark 4 Connect server
# (spark4-connect-check). One summary with each step's counts and minutes; every other
# feature test runs on Spark 4 in the nightly spark4-lane.
SPARK4_CHECK_TESTS ?= tests/functional/mutable_table tests/functional/scd2 tests/functional/topic
SPARK4_CHECK_MARKS ?= spark4_path or smoke
spark4-check:
	@$(PYTHON) scripts/lane_report.py --name spark4-check spark4-venv spark4-unit spark4-features \
	  spark4-delta-types spark4-iceberg spark4-connect-check

# Spark 4's own types on Delta 4 (PySpark 4.0 with Delta 4.0.1, `make jars`): a variant
# value column under Delta's variantType feature, exact casts with ANSI on, and Delta 4's
# type widening (int to bigint and beyond).
spark4-delta-types: $(SPARK4_DELTA_VENV)/.installed jars
	@$(S4D)/python scripts/check_java.py
	JAMMI_TEST_ANSI=true $(S4D)/python scripts/delta_lane.py \
	  tests/functional/mutable_table/test_spark4_types.py \
	  tests/functional/mutable_table/test_exact_casts.py \
	  tests/functional/mutable_table/test_schema_evolution.py

# Iceberg on Spark 4: PySpark 4.1 (.venv-spark4-iceberg) with Iceberg's newest Spark 4
# runtime, iceberg-spark-runtime-4.1_2.13 (Maven coordinates, jar_releases.py), ANSI on:
# the Iceberg lane's gate slice (the MERGE applier, its conflict re-plan, the refusals, a
# topic on an Iceberg session).
spark4-iceberg: $(SPARK4_ICEBERG_VENV)/.installed jars
	@$(S4I)/python scripts/check_java.py
	JAMMI_TEST_ANSI=true $(S4I)/python scripts/iceberg_lane.py --gate

spark4-venv: $(SPARK4_VENV)/.installed

# Spark 4 with ANSI on: unit, one smoke test per materialization, every Spark type, and
# the smoke tests over a Spark 4 Connect server.
spark4-gate:
	@$(PYTHON) scripts/lane_report.py --name spark4-gate spark4-venv spark4-unit spark4-smoke \
	  spark4-types spark4-connect-smoke

spark4-smoke: $(SPARK4_VENV)/.installed
	@$(S4)/python scripts/check_java.py
	JAMMI_TEST_ANSI=true $(S4)/python scripts/lane_map.py slice spark4-smoke -m smoke

spark4-types: $(SPARK4_VENV)/.installed
	@$(S4)/python scripts/check_java.py
	JAMMI_TEST_ANSI=true $(S4)/python scripts/lane_map.py slice spark4-types -m spark4_path

spark4-connect-smoke: $(SPARK4_VENV)/.installed
	@$(S4)/python scripts/check_java.py
	@$(S4)/python scripts/connect_server.py lane --check --marks smoke

spark4-features: $(SPARK4_VENV)/.installed
	@$(S4)/python scripts/check_java.py
	JAMMI_TEST_ANSI=true $(S4)/pytest $(SPARK4_CHECK_TESTS) -m "$(SPARK4_CHECK_MARKS)" -q -rs \
	  -p no:cacheprovider --durations=15 $(PYTEST_ARGS)

# Iceberg's runtime for the installed Spark line on a local session (scripts/iceberg_probe.py):
# a smoke test of `make jars`' Iceberg releases, not in `make test`. SPARK4_DELTA=1: on
# PySpark 4.0 (.venv-spark4-delta), the Spark line of the 4.0 runtime.
ICEBERG_PYTHON = $(if $(SPARK4_DELTA),$(S4D),$(BIN))/python
iceberg-probe: jars $(if $(SPARK4_DELTA),$(SPARK4_DELTA_VENV)/.installed)
	@$(ICEBERG_PYTHON) scripts/iceberg_probe.py

clean:
	rm -rf .jars $(VENV) $(SPARK4_VENV) $(SPARK4_DELTA_VENV) $(SPARK4_ICEBERG_VENV) integration_project/.spark \
	  integration_project/.spark-spark4 integration_project/.spark-iceberg integration_project/target integration_project/target-spark4 \
	  integration_project/logs
