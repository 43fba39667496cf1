// promcheck checks aiadmit's alerting rules and dashboard queries with
// Prometheus's own code: a rule file as `promtool check rules` checks it
// (rulefmt.Parse, strict, with promtool's parser options, then its
// duplicate-rule lint), each expression's metric selectors, which
// tests/install/monitoring_test.cpp holds against a real /metrics scrape,
// and the alerts over input series as `promtool test rules` runs them
// (alerts.go). promtool itself imports every service discovery (the cloud
// SDKs among them); this imports the rule format and PromQL alone.
//
//	promcheck rules FILE   FILE: rule groups, {groups: [...]} (a PrometheusRule's spec)
//	promcheck exprs FILE   FILE: one PromQL expression per line; Grafana's
//	                       $__rate_interval and $variables are taken as a
//	                       duration and a label value
//	promcheck test RULES TESTS
//	                       the alerts of RULES over input series, in the
//	                       format of `promtool test rules` (alerts.go)
//
// Prints {"rules": N (rules, expressions or alert checks), "errors": [...],
// "selectors": [{"expr": "...",
// "metric": NAME, "labels": {NAME: VALUE}}]}, the labels being the
// selector's equality matchers, and exits 1 when there are errors.
package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

type selector struct {
	Expr   string            `json:"expr"`
	Metric string            `json:"metric"`
	Labels map[string]string `json:"labels"`
}

type report struct {
	Rules     int        `json:"rules"`
	Errors    []string   `json:"errors"`
	Selectors []selector `json:"selectors"`
}

// As `promtool check rules` parses: experimental duration expressions on.
var promqlParser = parser.NewParser(parser.Options{ExperimentalDurationExpr: true})

func selectorsOf(text string, out *report) {
	expr, err := promqlParser.ParseExpr(text)
	if err != nil {
		out.Errors = append(out.Errors, fmt.Sprintf("%q: %v", text, err))
		return
	}
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		vector, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		found := selector{Expr: text, Metric: vector.Name, Labels: map[string]string{}}
		for _, matcher := range vector.LabelMatchers {
			if matcher.Type != labels.MatchEqual {
				continue
			}
			if matcher.Name == model.MetricNameLabel {
				found.Metric = matcher.Value
			} else {
				found.Labels[matcher.Name] = matcher.Value
			}
		}
		out.Selectors = append(out.Selectors, found)
		return nil
	})
}

// promtool's duplicate-rule lint: two rules of one name with the same labels.
func duplicates(groups []rulefmt.RuleGroup) []string {
	seen := map[string]bool{}
	var found []string
	for _, group := range groups {
		for _, rule := range group.Rules {
			name := rule.Alert + rule.Record
			keys := make([]string, 0, len(rule.Labels))
			for key, value := range rule.Labels {
				keys = append(keys, key+"="+value)
			}
			sort.Strings(keys)
			key := name + "{" + strings.Join(keys, ",") + "}"
			if seen[key] {
				found = append(found, "duplicate rule "+key)
			}
			seen[key] = true
		}
	}
	return found
}

func checkRules(file string, out *report) {
	content, err := os.ReadFile(file)
	if err != nil {
		out.Errors = append(out.Errors, err.Error())
		return
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	groups, errs := rulefmt.Parse(content, false, model.UTF8Validation, promqlParser, logger)
	for _, err := range errs {
		out.Errors = append(out.Errors, err.Error())
	}
	if groups == nil {
		return
	}
	out.Errors = append(out.Errors, duplicates(groups.Groups)...)
	for _, group := range groups.Groups {
		for _, rule := range group.Rules {
			out.Rules++
			selectorsOf(rule.Expr, out)
		}
	}
}

var (
	grafanaInterval = regexp.MustCompile(`\$__(rate_interval|interval|range)\b`)
	grafanaVariable = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)
)

func checkExprs(file string, out *report) {
	content, err := os.ReadFile(file)
	if err != nil {
		out.Errors = append(out.Errors, err.Error())
		return
	}
	for _, line := range strings.Split(string(content), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		text := grafanaInterval.ReplaceAllString(line, "5m")
		text = grafanaVariable.ReplaceAllString(text, "${1}")
		out.Rules++
		selectorsOf(text, out)
	}
}

func main() {
	test := len(os.Args) == 4 && os.Args[1] == "test"
	if !test && (len(os.Args) != 3 || (os.Args[1] != "rules" && os.Args[1] != "exprs")) {
		fmt.Fprintln(os.Stderr, "usage: promcheck rules|exprs FILE, or promcheck test RULES TESTS")
		os.Exit(2)
	}
	out := report{Errors: []string{}, Selectors: []selector{}}
	switch {
	case test:
		runAlertTests(os.Args[2], os.Args[3], &out)
	case os.Args[1] == "rules":
		checkRules(os.Args[2], &out)
	default:
		checkExprs(os.Args[2], &out)
	}
	encoded, _ := json.Marshal(out)
	fmt.Println(string(encoded))
	if len(out.Errors) > 0 {
		os.Exit(1)
	}
}
