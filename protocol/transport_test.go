package protocol

import (
	"slices"
	"testing"
)

func TestTransports(t *testing.T) {
	if got := Transports(); !slices.Equal(got, []Transport{"stdio", "http", "websocket"}) {
		t.Fatalf("Transports() = %v", got)
	}
	tests := []struct {
		t            Transport
		known, frame bool
	}{
		{TransportStdio, true, true},
		{TransportHTTP, true, false},
		{TransportWebSocket, true, true},
		{"sse", false, false},
		{"", false, false},
	}
	for _, tt := range tests {
		if tt.t.Known() != tt.known || tt.t.Framed() != tt.frame {
			t.Errorf("%q: Known %v Framed %v, want %v %v", tt.t, tt.t.Known(), tt.t.Framed(), tt.known, tt.frame)
		}
	}
}
