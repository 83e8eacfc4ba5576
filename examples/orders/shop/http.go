package shop

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/retry"
)

// maxBody bounds a request body.
const maxBody = 64 << 10

// Handler serves the shop's HTTP/JSON API:
//
//	PUT    /customers/{id}           {"name","email","nickname"?,"tags"?}  replace a profile
//	GET    /customers/{id}                                                 profile and order count
//	POST   /orders                   {"customer","items":[…],"coupon"?,"at"}  Idempotency-Key required
//	GET    /orders/{id}
//	POST   /orders/{id}/status       {"status","at"}                       Idempotency-Key required
//	GET    /orders/{id}/events
//	DELETE /orders/{id}                                                    Idempotency-Key names the delete
//	POST   /orders/{id}/undelete     {"command"}                           the delete's key
//	GET    /healthz                                                        and the clock's offset
func (svc *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /customers/{id}", svc.handle(func(r *http.Request) (int, any, error) {
		id, err := pathID(r)
		if err != nil {
			return 0, nil, err
		}
		var c Customer
		if err := decode(r, &c); err != nil {
			return 0, nil, err
		}
		c.ID = id
		return http.StatusOK, c, svc.PutCustomer(r.Context(), c)
	}))
	mux.HandleFunc("GET /customers/{id}", svc.handle(func(r *http.Request) (int, any, error) {
		id, err := pathID(r)
		if err != nil {
			return 0, nil, err
		}
		c, err := svc.GetCustomer(r.Context(), id)
		return http.StatusOK, c, err
	}))
	mux.HandleFunc("POST /orders", svc.handle(func(r *http.Request) (int, any, error) {
		var req NewOrder
		if err := decode(r, &req); err != nil {
			return 0, nil, err
		}
		o, created, err := svc.PlaceOrder(r.Context(), r.Header.Get("Idempotency-Key"), req)
		if created {
			return http.StatusCreated, o, err
		}
		return http.StatusOK, o, err
	}))
	mux.HandleFunc("GET /orders/{id}", svc.handle(func(r *http.Request) (int, any, error) {
		id, err := pathID(r)
		if err != nil {
			return 0, nil, err
		}
		o, err := svc.GetOrder(r.Context(), id)
		return http.StatusOK, o, err
	}))
	mux.HandleFunc("POST /orders/{id}/status", svc.handle(func(r *http.Request) (int, any, error) {
		id, err := pathID(r)
		if err != nil {
			return 0, nil, err
		}
		var req struct {
			Status string    `json:"status"`
			At     time.Time `json:"at"`
		}
		if err := decode(r, &req); err != nil {
			return 0, nil, err
		}
		err = svc.SetStatus(r.Context(), id, r.Header.Get("Idempotency-Key"), req.Status, req.At)
		return http.StatusOK, map[string]string{"status": req.Status}, err
	}))
	mux.HandleFunc("GET /orders/{id}/events", svc.handle(func(r *http.Request) (int, any, error) {
		id, err := pathID(r)
		if err != nil {
			return 0, nil, err
		}
		events, err := svc.History(r.Context(), id)
		type event struct {
			ID      gocql.UUID `json:"id"`
			Time    time.Time  `json:"time"`
			Type    string     `json:"type"`
			Payload string     `json:"payload,omitempty"`
			Writer  string     `json:"writer"`
		}
		out := make([]event, 0, len(events))
		for _, e := range events {
			out = append(out, event{e.ID, e.Time.UTC(), e.Type, string(e.Payload), e.Writer})
		}
		return http.StatusOK, out, err
	}))
	mux.HandleFunc("DELETE /orders/{id}", svc.handle(func(r *http.Request) (int, any, error) {
		id, err := pathID(r)
		if err != nil {
			return 0, nil, err
		}
		rec, err := svc.DeleteOrder(r.Context(), id, r.Header.Get("Idempotency-Key"))
		return http.StatusOK, map[string]any{"deleted_at": rec.Timestamp, "command": rec.CommandID}, err
	}))
	mux.HandleFunc("POST /orders/{id}/undelete", svc.handle(func(r *http.Request) (int, any, error) {
		id, err := pathID(r)
		if err != nil {
			return 0, nil, err
		}
		var req struct {
			Command string `json:"command"`
		}
		if err := decode(r, &req); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, map[string]string{"restored": id.String()}, svc.UndeleteOrder(r.Context(), id, req.Command)
	}))
	mux.HandleFunc("GET /healthz", svc.handle(func(r *http.Request) (int, any, error) {
		h := map[string]any{"ok": true}
		if o, ok := svc.policy.ClockOffset(); ok {
			h["clock_offset_ms"] = float64(o.Offset) / float64(time.Millisecond)
			h["clock_uncertainty_ms"] = float64(o.Uncertainty) / float64(time.Millisecond)
		}
		return http.StatusOK, h, nil
	}))
	return mux
}

// handle runs f and writes its result, or its error with the status it maps to.
func (svc *Service) handle(f func(r *http.Request) (int, any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		code, body, err := f(r)
		if err != nil {
			code = statusOf(err)
			body = map[string]string{"error": err.Error()}
			if code >= 500 {
				svc.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", code, "err", err)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(body)
	}
}

func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrConflict):
		return http.StatusConflict
	case errors.Is(err, ErrUnavailable), errors.Is(err, retry.ErrClockSkew):
		// 503: the client sends the same request again (same Idempotency-Key).
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func pathID(r *http.Request) (gocql.UUID, error) {
	id, err := gocql.ParseUUID(r.PathValue("id"))
	if err != nil {
		return id, fmt.Errorf("%w: id %q is not a UUID", ErrInvalid, r.PathValue("id"))
	}
	return id, nil
}

func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: body: %s", ErrInvalid, jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: body: more than one JSON value", ErrInvalid)
	}
	return nil
}

// jsonProblem says what is wrong with a request body in the API's words, not Go's.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var tooBig *http.MaxBytesError
	switch {
	case errors.Is(err, io.EOF):
		return "empty: a JSON object is expected"
	case errors.As(err, &tooBig):
		return fmt.Sprintf("over %d bytes", tooBig.Limit)
	case errors.As(err, &syn):
		return fmt.Sprintf("not valid JSON at offset %d", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fmt.Sprintf("a JSON object is expected, not %s", typ.Value)
		}
		return fmt.Sprintf("field %q must be %s, not %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "not valid JSON: it ends too early"
	}
	// time.Time and gocql.UUID say what they expect themselves.
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(k string) string {
	switch k {
	case "int", "int64", "int32", "uint", "uint64", "float64":
		return "a number"
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "map", "struct":
		return "an object"
	case "bool":
		return "true or false"
	case "array":
		return "a string (a UUID)"
	}
	return "another type"
}
