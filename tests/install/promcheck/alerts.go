package main

// `promcheck test RULES TESTS`: the alerts of a rule file evaluated over
// input series, in the format of `promtool test rules` (input_series with
// its expanding notation, alert_rule_test with eval_time, alertname and
// exp_alerts' exp_labels): Prometheus' own PromQL engine evaluates each
// alert's expression at every evaluation_interval from 0 to eval_time, and
// an alert fires for a label set its expression has returned without a gap
// for the rule's `for`. Annotations are not compared.

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"
	"go.yaml.in/yaml/v3"
)

type testFile struct {
	EvaluationInterval model.Duration `yaml:"evaluation_interval"`
	Tests              []struct {
		Name        string         `yaml:"name"`
		Interval    model.Duration `yaml:"interval"`
		InputSeries []struct {
			Series string `yaml:"series"`
			Values string `yaml:"values"`
		} `yaml:"input_series"`
		AlertRuleTest []struct {
			EvalTime  model.Duration `yaml:"eval_time"`
			AlertName string         `yaml:"alertname"`
			ExpAlerts []struct {
				ExpLabels map[string]string `yaml:"exp_labels"`
			} `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// A float sample for storage.NewListSeries.
type floatSample struct {
	t int64
	f float64
}

func (s floatSample) T() int64                      { return s.t }
func (s floatSample) ST() int64                     { return 0 }
func (s floatSample) F() float64                    { return s.f }
func (s floatSample) H() *histogram.Histogram       { return nil }
func (s floatSample) FH() *histogram.FloatHistogram { return nil }
func (s floatSample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (s floatSample) Copy() chunks.Sample           { return s }

type seriesSet struct {
	series []storage.Series
	at     int
}

func (s *seriesSet) Next() bool                        { s.at++; return s.at <= len(s.series) }
func (s *seriesSet) At() storage.Series                { return s.series[s.at-1] }
func (s *seriesSet) Err() error                        { return nil }
func (s *seriesSet) Warnings() annotations.Annotations { return nil }

// The input series in memory, selected by their matchers.
func queryable(series []storage.Series) storage.Queryable {
	return storage.QueryableFunc(func(int64, int64) (storage.Querier, error) {
		return &storage.MockQuerier{SelectMockFunction: func(_ bool, _ *storage.SelectHints,
			matchers ...*labels.Matcher) storage.SeriesSet {
			var selected []storage.Series
			for _, candidate := range series {
				matches := true
				for _, matcher := range matchers {
					matches = matches && matcher.Matches(candidate.Labels().Get(matcher.Name))
				}
				if matches {
					selected = append(selected, candidate)
				}
			}
			return &seriesSet{series: selected}
		}}, nil
	})
}

// One input series: its samples `interval` apart from time 0 ("_" omits
// one; "stale" is a staleness marker, as promtool reads them).
func loadSeries(desc, values string, interval time.Duration) (storage.Series, error) {
	metric, sequence, err := promqlParser.ParseSeriesDesc(desc + " " + values)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", desc, values, err)
	}
	var samples []chunks.Sample
	for i, v := range sequence {
		if !v.Omitted {
			samples = append(samples, floatSample{t: int64(i) * interval.Milliseconds(), f: v.Value})
		}
	}
	return storage.NewListSeries(metric, samples), nil
}

// The label sets of `rule` firing at `evalTime`, each as "{a="b", ...}".
func firing(engine *promql.Engine, store storage.Queryable, rule rulefmt.Rule,
	evalTime, step time.Duration) ([]string, error) {
	activeSince := map[string]time.Duration{}
	for t := time.Duration(0); t <= evalTime; t += step {
		query, err := engine.NewInstantQuery(context.Background(), store, nil, rule.Expr,
			time.UnixMilli(t.Milliseconds()))
		if err != nil {
			return nil, err
		}
		vector, err := query.Exec(context.Background()).Vector()
		query.Close()
		if err != nil {
			return nil, err
		}
		present := map[string]bool{}
		for _, sample := range vector {
			builder := labels.NewBuilder(sample.Metric)
			builder.Del(labels.MetricName)
			for name, val := range rule.Labels {
				builder.Set(name, val)
			}
			key := builder.Labels().String()
			present[key] = true
			if _, ok := activeSince[key]; !ok {
				activeSince[key] = t
			}
		}
		for key := range activeSince {
			if !present[key] {
				delete(activeSince, key)
			}
		}
	}
	var out []string
	for key, since := range activeSince {
		if evalTime-since >= time.Duration(rule.For) {
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out, nil
}

func runAlertTests(rulesFile, testsFile string, out *report) {
	content, err := os.ReadFile(rulesFile)
	if err != nil {
		out.Errors = append(out.Errors, err.Error())
		return
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	groups, errs := rulefmt.Parse(content, false, model.UTF8Validation, promqlParser, logger)
	if len(errs) > 0 {
		for _, err := range errs {
			out.Errors = append(out.Errors, err.Error())
		}
		return
	}
	alerts := map[string]rulefmt.Rule{}
	for _, group := range groups.Groups {
		for _, rule := range group.Rules {
			alerts[rule.Alert] = rule
		}
	}
	var tests testFile
	content, err = os.ReadFile(testsFile)
	if err == nil {
		decoder := yaml.NewDecoder(strings.NewReader(string(content)))
		decoder.KnownFields(true)
		err = decoder.Decode(&tests)
	}
	if err != nil {
		out.Errors = append(out.Errors, fmt.Sprintf("%s: %v", testsFile, err))
		return
	}
	engine := promql.NewEngine(promql.EngineOpts{
		MaxSamples: 1000000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute,
		Parser: promqlParser,
	})
	step := time.Duration(tests.EvaluationInterval)
	for _, test := range tests.Tests {
		var series []storage.Series
		for _, input := range test.InputSeries {
			loaded, err := loadSeries(input.Series, input.Values, time.Duration(test.Interval))
			if err != nil {
				out.Errors = append(out.Errors, test.Name+": "+err.Error())
				continue
			}
			series = append(series, loaded)
		}
		store := queryable(series)
		for _, check := range test.AlertRuleTest {
			out.Rules++
			rule, ok := alerts[check.AlertName]
			if !ok {
				out.Errors = append(out.Errors, test.Name+": no alert "+check.AlertName)
				continue
			}
			got, err := firing(engine, store, rule, time.Duration(check.EvalTime), step)
			if err != nil {
				out.Errors = append(out.Errors, test.Name+": "+err.Error())
				continue
			}
			var want []string
			for _, expected := range check.ExpAlerts {
				want = append(want, labels.FromMap(expected.ExpLabels).String())
			}
			sort.Strings(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				out.Errors = append(out.Errors, fmt.Sprintf("%s: %s at %s: fires for %v, expected %v",
					test.Name, check.AlertName, check.EvalTime, got, want))
			}
		}
	}
}
