package web

import (
	"errors"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/citebook/citebook"
)

// metrics are registered on the registry the caller passes, so tests and
// several servers in one process never collide on global state.
type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	ask      *prometheus.HistogramVec
	refusals prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "citebook_http_requests_total",
			Help: "HTTP requests by route template, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "citebook_http_request_duration_seconds",
			Help:    "HTTP request latency by route template, method and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method", "status"}),
		ask: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "citebook_ask_duration_seconds",
			Help:    "Time to a complete answer, by outcome (answered, refused, error).",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"outcome"}),
		refusals: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "citebook_ask_refusals_total",
			Help: "Answers refused because nothing in the books could be verified.",
		}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.ask, m.refusals} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return nil, citebook.Wrap(err, citebook.EINVALID, "web: metrics already registered on this registry")
			}
			return nil, citebook.Wrap(err, citebook.EINTERNAL, "web: registering metrics")
		}
	}
	return m, nil
}

// observeAsk records one ask outcome.
func (m *metrics) observeAsk(d time.Duration, refused bool, err error) {
	outcome := "answered"
	switch {
	case err != nil:
		outcome = "error"
	case refused:
		outcome = "refused"
		m.refusals.Inc()
	}
	m.ask.WithLabelValues(outcome).Observe(d.Seconds())
}

// observe counts and times every request by its route template (never the
// raw path, which would explode label cardinality) and final status.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			// Let the error handler write the response now so the status is known.
			c.Error(err)
		}
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		status := strconv.Itoa(c.Response().Status)
		method := c.Request().Method
		s.metrics.requests.WithLabelValues(route, method, status).Inc()
		s.metrics.latency.WithLabelValues(route, method, status).Observe(time.Since(start).Seconds())
		return nil
	}
}
