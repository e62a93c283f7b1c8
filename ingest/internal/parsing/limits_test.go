package parsing

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/citebook/citebook"
)

// TestLimitsWithDefaults: every zero or negative field takes its default,
// every field set is kept — for each field, so a field added to Limits but
// not to WithDefaults fails here.
func TestLimitsWithDefaults(t *testing.T) {
	d := DefaultLimits()
	if got := (Limits{}).WithDefaults(); got != d {
		t.Fatalf("zero Limits: %+v, want the defaults %+v", got, d)
	}
	dv := reflect.ValueOf(d)
	for i := range dv.NumField() {
		name := dv.Type().Field(i).Name
		if dv.Field(i).Int() <= 0 {
			t.Errorf("default %s is %v, not positive", name, dv.Field(i).Interface())
		}
		var set, neg Limits
		reflect.ValueOf(&set).Elem().Field(i).SetInt(dv.Field(i).Int() + 1)
		reflect.ValueOf(&neg).Elem().Field(i).SetInt(-1)
		if got := reflect.ValueOf(set.WithDefaults()).Field(i).Int(); got != dv.Field(i).Int()+1 {
			t.Errorf("%s set to %d became %d", name, dv.Field(i).Int()+1, got)
		}
		if got := neg.WithDefaults(); got != d {
			t.Errorf("%s negative: %+v, want the defaults", name, got)
		}
	}
}

// TestDeadlineError: the end of a parse's context is a too-large file at
// the deadline and unavailable on cancellation.
func TestDeadlineError(t *testing.T) {
	l := Limits{Timeout: time.Millisecond}
	if err := l.DeadlineError(context.Background()); err != nil {
		t.Fatalf("live context: %v", err)
	}
	ctx, cancel := l.WithDeadline(context.Background())
	defer cancel()
	<-ctx.Done()
	if code := citebook.ErrorCode(l.DeadlineError(ctx)); code != citebook.ETOOLARGE {
		t.Errorf("deadline: code %q", code)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if code := citebook.ErrorCode(l.DeadlineError(ctx)); code != citebook.EUNAVAILABLE {
		t.Errorf("cancelled: code %q", code)
	}
}
