package procnet_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-conform/mcp-conform/procnet"
)

func TestParseTCP(t *testing.T) {
	for _, tc := range []struct {
		name, table string
		want        []string
	}{
		{"ipv4", `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1234 1 0000000000000000 100 0 0 10 0
   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 99 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 77 1 0000000000000000 20 4 30 10 -1
`, []string{"127.0.0.1:8080 1234", "0.0.0.0:22 99"}},
		{"ipv6", `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 555 1 0000000000000000 100 0 0 10 0
   1: 00000000000000000000000000000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 556 1 0000000000000000 100 0 0 10 0
`, []string{"[::1]:8080 555", "[::]:80 556"}},
		{"empty", "  sl  local_address rem_address   st\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls, err := procnet.ParseTCP(strings.NewReader(tc.table))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range ls {
				got = append(got, l.Addr.String()+" "+strconv.FormatUint(l.Inode, 10))
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseTCPBadAddress(t *testing.T) {
	_, err := procnet.ParseTCP(strings.NewReader("h\n 0: XYZ:1F90 00000000:0000 0A a b c d e 1\n"))
	if err == nil {
		t.Fatal("no error for a bad address")
	}
}
