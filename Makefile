# Two entry points on a fresh machine:
#   make demo   build integration_project/ on the embedded Spark session
#   make test   the gate (at most 30 minutes on 2 cores): lint, unit, the functional
#               lane, and a slice of every other lane (docs/testing.md)
# Before an issue is resolved: make test-full (every lane), or make test-affected
# BASE=<rev> (the lanes of what changed since <rev>, scripts/lane_map.py).
PYTHON ?= python3
VENV ?= .venv
# The other Spark lines' environments (below; docs/compatibility.md).
SPARK35_VENV ?= .venv-spark35
SPARK43_VENV ?= .venv-spark43
S35 := $(SPARK35_VENV)/bin
S43 := $(SPARK43_VENV)/bin
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
# A Delta or Iceberg lane whose format cannot load fails with the reason instead of
# passing with nothing run (`make jars` fetches both); set 0 to let it skip.
export JAMMI_DELTA_REQUIRED ?= 1
export JAMMI_ICEBERG_REQUIRED ?= 1

.PHONY: jaffle-shop-check functional-gate cluster-lanes checks java-check jars iceberg-probe demo demo-delta demo-iceberg test test-full test-affected delta-gate iceberg-gate cluster-gate connect-gate crash-gate test-quick cluster-fault-lane lint unit functional delta-lane connect-lane thrift-lane thrift-delta-lane thrift-delta-lane-all thrift-iceberg-lane orc-lane crash-lane iceberg-lane iceberg-rest-lane docs-browser bench clean spark35-venv spark35-unit spark35-functional spark35-delta-lane spark35-iceberg-lane spark35-smoke spark35-delta-gate spark35-iceberg-gate spark35-gate spark35-lane spark43-venv spark43-unit spark43-features spark43-connect-smoke spark43-lane race-repeats

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

# Every race test RACES times and every fault test FAULTS times, each repetition its own
# pytest process, over the servers the lanes start; one table sums each scenario's counts
# (scripts/race_repeats.py; ONLY: some of cluster,iceberg,connect,embedded). Not in
# `make test-full` (docs/testing.md, "Races and faults, repeated").
RACES ?= 10
FAULTS ?= 5
ONLY ?= cluster,iceberg,connect,embedded
race-repeats: jars
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/race_repeats.py --races $(RACES) --faults $(FAULTS) --only $(ONLY)

# dbt-labs' jaffle_shop as published, then switched to mutable tables, on an embedded
# session that builds Hive-format tables (docs/testing.md, "jaffle_shop"); a checkout of
# https://github.com/dbt-labs/jaffle_shop, which the CI machines do not reach.
jaffle-shop-check: $(STAMP)
	@$(MAKE) --no-print-directory java-check
	@test -n "$(JAFFLE_SHOP)" || (echo "set JAFFLE_SHOP=<a jaffle_shop checkout>"; exit 2)
	@$(BIN)/python scripts/jaffle_shop_check.py $(JAFFLE_SHOP)

# Faults on the cluster's side (tests/process/test_cluster_faults.py): a standalone
# cluster on loopback, a worker SIGKILLed under a run and under a publish, the Thrift
# server SIGKILLed in a commit and restarted.
cluster-fault-lane: $(STAMP)
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/thrift_server.py faults

# The rewrite applier on orc: the row rules' functional files with orc in parquet's
# place (scripts/lane_map.py, FULL_SLICES["orc"]); every other file runs orc's own
# cases on the functional lane.
orc-lane: $(STAMP)
	@$(MAKE) --no-print-directory java-check
	@$(BIN)/python scripts/lane_map.py slice orc

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
# SPARK=3.5: on the compatibility line (.venv-spark35, installed when missing).
ROWS ?= 1000000
SPARK ?= 4.1
bench: jars $(if $(filter 3.5,$(SPARK)),$(SPARK35_VENV)/.installed)
	@$(MAKE) --no-print-directory java-check
	$(BIN)/python bench/run_all.py --rows $(ROWS) --spark $(SPARK)

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

# The other Spark lines (docs/compatibility.md): the home line, Spark 4.1, is .venv
# (constraints.txt) and every lane above. Two more environments take constraints.txt
# with the pins of their own constraints file:
#   .venv-spark35  the compatibility line, Spark 3.5 with Delta 3.3.3 and Iceberg's 3.5
#                  runtime: a gate slice (spark35-gate) and, in `make test-full`, its
#                  unit, functional, Delta and Iceberg lanes (spark35-lane)
#   .venv-spark43  the newest Spark, 4.3, which no table format publishes a runtime for
#                  yet: unit, the parquet feature tests with a Spark-specific path and
#                  the smoke tests, and the Connect smoke (spark43-lane, in test-full)

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

$(SPARK35_VENV)/.installed: pyproject.toml constraints.txt constraints-spark35.txt
	$(call pinned_venv,$(SPARK35_VENV),constraints-spark35.txt)

$(SPARK43_VENV)/.installed: pyproject.toml constraints.txt constraints-spark43.txt
	$(call pinned_venv,$(SPARK43_VENV),constraints-spark43.txt)

spark35-venv: $(SPARK35_VENV)/.installed
spark43-venv: $(SPARK43_VENV)/.installed

spark35-unit: $(SPARK35_VENV)/.installed
	$(S35)/pytest tests/unit -q -p no:cacheprovider $(PYTEST_ARGS)

spark35-functional: $(SPARK35_VENV)/.installed
	@$(S35)/python scripts/check_java.py
	$(S35)/pytest tests/functional -q -rs -p no:cacheprovider --durations=10 $(PYTEST_ARGS)

spark35-delta-lane: $(SPARK35_VENV)/.installed jars
	@$(S35)/python scripts/check_java.py
	@$(S35)/python scripts/delta_lane.py

spark35-iceberg-lane: $(SPARK35_VENV)/.installed jars
	@$(S35)/python scripts/check_java.py
	@$(S35)/python scripts/iceberg_lane.py

# The compatibility line's gate slice: one smoke test per materialization on parquet,
# then the Delta and Iceberg slices that differ by line (lane_map.GATE_SLICES
# spark35-delta, spark35-iceberg: Iceberg's counted change set on 3.5).
spark35-smoke: $(SPARK35_VENV)/.installed
	@$(S35)/python scripts/check_java.py
	@$(S35)/python scripts/lane_map.py slice spark35-smoke -m smoke

spark35-delta-gate: $(SPARK35_VENV)/.installed jars
	@$(S35)/python scripts/check_java.py
	@$(S35)/python scripts/delta_lane.py --gate

spark35-iceberg-gate: $(SPARK35_VENV)/.installed jars
	@$(S35)/python scripts/check_java.py
	@$(S35)/python scripts/iceberg_lane.py --gate

spark35-gate:
	@$(PYTHON) scripts/lane_report.py --name spark35-gate spark35-venv spark35-smoke \
	  spark35-delta-gate spark35-iceberg-gate

spark35-lane:
	@$(PYTHON) scripts/lane_report.py --name spark35-lane spark35-venv spark35-unit \
	  spark35-functional spark35-delta-lane spark35-iceberg-lane

# The newest Spark (4.3) on parquet with ANSI on (asserted: JAMMI_TEST_ANSI,
# tests/conftest.py): the feature tests with a Spark-specific path (marked spark4_path)
# and the smoke tests, then the smoke tests over a Spark 4.3 Connect server.
SPARK43_TESTS ?= tests/functional/mutable_table tests/functional/scd2 tests/functional/topic
SPARK43_MARKS ?= spark4_path or smoke
spark43-unit: $(SPARK43_VENV)/.installed
	$(S43)/pytest tests/unit -q -p no:cacheprovider $(PYTEST_ARGS)

spark43-features: $(SPARK43_VENV)/.installed
	@$(S43)/python scripts/check_java.py
	JAMMI_TEST_ANSI=true $(S43)/pytest $(SPARK43_TESTS) -m "$(SPARK43_MARKS)" -q -rs \
	  -p no:cacheprovider --durations=15 $(PYTEST_ARGS)

spark43-connect-smoke: $(SPARK43_VENV)/.installed
	@$(S43)/python scripts/check_java.py
	@$(S43)/python scripts/connect_server.py lane --check --marks smoke

spark43-lane:
	@$(PYTHON) scripts/lane_report.py --name spark43-lane spark43-venv spark43-unit \
	  spark43-features spark43-connect-smoke

# Iceberg's runtime for the installed Spark line on a local session (scripts/iceberg_probe.py):
# a smoke test of `make jars`' Iceberg releases, not in `make test`. SPARK35=1: on the
# compatibility line (.venv-spark35), with Iceberg's 3.5 runtime.
ICEBERG_PYTHON = $(if $(SPARK35),$(S35),$(BIN))/python
iceberg-probe: jars $(if $(SPARK35),$(SPARK35_VENV)/.installed)
	@$(ICEBERG_PYTHON) scripts/iceberg_probe.py

clean:
	rm -rf .jars $(VENV) $(SPARK35_VENV) $(SPARK43_VENV) integration_project/.spark \
	  integration_project/.spark-delta integration_project/.spark-iceberg integration_project/target \
	  integration_project/logs
