# Grafana dashboard and Prometheus alert rules (deploy/grafana/, deploy/prometheus/; docs/monitoring.md).
# Included by the Makefile. `observe-check` checks the rules' syntax and runs their unit tests
# (each alert fires on the series that should fire it and stays silent on the others) with
# promtool; Tests/EndToEnd/test_dashboard.py checks every metric the dashboard and the rules name
# against live hubs. `prometheus-tools` installs Debian's prometheus package (promtool, and the
# server the end-to-end test scrapes the hubs with) when promtool is missing. On a host that runs
# systemd the package also enables and starts its own prometheus.service (port 9090); the tests
# do not use it (`systemctl disable --now prometheus` if it is not wanted).

PROMTOOL ?= promtool
OBSERVE_RULES := deploy/prometheus/pushhub-rules.yml
OBSERVE_RULE_TESTS := deploy/prometheus/pushhub-rules.test.yml

.PHONY: prometheus-tools observe-check

prometheus-tools:
	@command -v $(PROMTOOL) >/dev/null 2>&1 || { echo "installing prometheus (promtool)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus; }

observe-check: prometheus-tools
	$(PROMTOOL) check rules $(OBSERVE_RULES)
	$(PROMTOOL) test rules $(OBSERVE_RULE_TESTS)
