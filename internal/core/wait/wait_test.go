package wait

import (
	"context"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	//lint:ignore SA1012 a nil context is documented as allowed
	if err := Sleep(nil, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); err == nil || time.Since(start) > time.Second {
		t.Fatal("Sleep ignored a cancelled context")
	}
	if err := Sleep(ctx, 0); err == nil {
		t.Fatal("zero wait on a cancelled context returned nil")
	}
}
