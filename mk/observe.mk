# Grafana dashboard and Prometheus alert rules (deploy/grafana/, deploy/prometheus/; docs/monitoring.md).
# Included by the Makefile. `observe-check` runs the checks of Tests/EndToEnd/test_dashboard.py
# that need no hub, in seconds: the dashboard's layout, promtool on the rules' syntax and their
# unit tests (each alert fires on the series that should fire it and stays silent on the others),
# and every alert's runbook. `make e2e` runs them too, with the test of every metric the
# dashboard and the rules name against live hubs scraped by a real Prometheus. `prometheus-tools` installs Debian's prometheus package (promtool, and the
# server the end-to-end test scrapes the hubs with) when promtool is missing. On a host that runs
# systemd the package also enables and starts its own prometheus.service (port 9090); the tests
# do not use it (`systemctl disable --now prometheus` if it is not wanted).

PROMTOOL ?= promtool

.PHONY: prometheus-tools observe-check

prometheus-tools:
	@command -v $(PROMTOOL) >/dev/null 2>&1 || { echo "installing prometheus (promtool)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus; }

observe-check: prometheus-tools venv
	.venv/bin/python -m pytest -q Tests/EndToEnd/test_dashboard.py --deselect \
	  Tests/EndToEnd/test_dashboard.py::test_everything_the_dashboard_and_rules_query_exists_on_live_hubs
