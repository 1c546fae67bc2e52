// dcexp-quicgo: our download server and client on quic-go, the third QUIC stack of dcexp.
//
// It speaks the protocol of our aioquic endpoint (experiments/flows/quic_endpoint.py), so
// either client works against either server: ALPN "dcexp", the client opens one
// bidirectional stream and sends "GET <nbytes>\n" (-1: until the client closes), the server
// answers with its file (looped if nbytes exceeds it) and FIN. The client writes a JSON line
// every 100 ms (CLOCK_MONOTONIC seconds, bytes received, its smoothed RTT) and at the end
// the SHA-256 of what it received. The server writes quic-go's own qlog (JSON-SEQ, one file
// per connection) when given --qlog-dir: the sender's RTT and congestion window.
//
//	dcexp-quicgo server --addr 10.0.0.1 --port 4433 --cert C --key K --file F [--qlog-dir D]
//	dcexp-quicgo client --addr 10.0.0.1 --port 4433 (--bytes N | --duration-s S) --log L
//	dcexp-quicgo version
//
// Congestion control is not selectable: quic-go always runs its NewReno (see README).
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlog"
	"golang.org/x/sys/unix"
)

const (
	alpn           = "dcexp"
	reportInterval = 100 * time.Millisecond
	chunk          = 64 * 1024
	maxRequestLine = 64
	// The flow-control limits of our aioquic endpoint (max_data, max_stream_data), so that
	// neither stack is held back by its receiver's window.
	receiveWindow = 16 * 1024 * 1024
	// Handshake and idle limits: a client that never finishes is dropped, the server stays.
	handshakeTimeout = 10 * time.Second
	idleTimeout      = 30 * time.Second
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: dcexp-quicgo server|client|version [options]")
	}
	var err error
	switch os.Args[1] {
	case "server":
		err = runServer(os.Args[2:])
	case "client":
		var code int
		code, err = runClient(os.Args[2:])
		if err == nil {
			os.Exit(code)
		}
	case "version":
		fmt.Println(quicGoVersion(), runtimeVersion())
	default:
		fail(fmt.Sprintf("unknown command %q: expected server, client or version", os.Args[1]))
	}
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "dcexp-quicgo:", msg)
	os.Exit(2)
}

// quicGoVersion is the quic-go module version this binary was built with.
func quicGoVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/quic-go/quic-go" {
				return "quic-go " + dep.Version
			}
		}
	}
	return "quic-go unknown"
}

func runtimeVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		return info.GoVersion
	}
	return "go-unknown"
}

func quicConfig() *quic.Config {
	return &quic.Config{
		HandshakeIdleTimeout:           handshakeTimeout,
		MaxIdleTimeout:                 idleTimeout,
		InitialStreamReceiveWindow:     receiveWindow,
		MaxStreamReceiveWindow:         receiveWindow,
		InitialConnectionReceiveWindow: receiveWindow,
		MaxConnectionReceiveWindow:     receiveWindow,
	}
}

// ---------------------------------------------------------------- server

func runServer(args []string) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	addr := fs.String("addr", "", "address to listen on")
	port := fs.Int("port", 0, "UDP port")
	certFile := fs.String("cert", "", "certificate (PEM)")
	keyFile := fs.String("key", "", "private key (PEM)")
	file := fs.String("file", "", "payload served (looped if needed)")
	qlogDir := fs.String("qlog-dir", "", "write quic-go's qlog here (one .sqlog per connection)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *addr == "" || *port <= 0 || *certFile == "" || *keyFile == "" || *file == "" {
		return errors.New("server needs --addr, --port, --cert, --key and --file")
	}
	payload, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	if len(payload) == 0 {
		return fmt.Errorf("payload %s is empty", *file)
	}
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		return err
	}
	conf := quicConfig()
	if *qlogDir != "" {
		// quic-go's own qlog writer takes its directory from QLOGDIR
		if err := os.Setenv("QLOGDIR", *qlogDir); err != nil {
			return err
		}
		conf.Tracer = qlog.DefaultConnectionTracer
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{alpn}}
	ln, err := quic.ListenAddr(net.JoinHostPort(*addr, strconv.Itoa(*port)), tlsConf, conf)
	if err != nil {
		return err
	}
	fmt.Println("listening")
	for {
		conn, err := ln.Accept(context.Background())
		if err != nil {
			return err
		}
		go serveConn(conn, payload)
	}
}

func serveConn(conn *quic.Conn, payload []byte) {
	for {
		stream, err := conn.AcceptStream(context.Background())
		if err != nil {
			return // the connection ended
		}
		go serveStream(stream, payload)
	}
}

// serveStream answers one "GET <nbytes>\n" with the payload; a malformed request resets
// the stream (the connection and the server stay up).
func serveStream(stream *quic.Stream, payload []byte) {
	line, err := bufio.NewReaderSize(io.LimitReader(stream, maxRequestLine), maxRequestLine).
		ReadString('\n')
	var nbytes int64
	if err == nil {
		var n int
		n, err = fmt.Sscanf(line, "GET %d\n", &nbytes)
		if n != 1 && err == nil {
			err = errors.New("no size")
		}
	}
	if err != nil || nbytes < -1 {
		stream.CancelWrite(1)
		stream.CancelRead(1)
		return
	}
	forever := nbytes < 0
	var written int64
	for forever || written < nbytes {
		pos := int(written % int64(len(payload)))
		size := min(chunk, len(payload)-pos)
		if !forever {
			size = int(min(int64(size), nbytes-written))
		}
		n, err := stream.Write(payload[pos : pos+size])
		written += int64(n)
		if err != nil {
			return // the client closed the stream or the connection
		}
	}
	stream.Close()
}

// ---------------------------------------------------------------- client

type report struct {
	TS      float64 `json:"ts"`
	Bytes   int64   `json:"bytes"`
	SRTTms  float64 `json:"srtt_ms"`
	Final   bool    `json:"final,omitempty"`
	SHA256  string  `json:"sha256,omitempty"`
	Done    *bool   `json:"complete,omitempty"`
	Elapsed float64 `json:"elapsed_s,omitempty"`
	RcvBuf  int     `json:"rcvbuf,omitempty"`
}

// monotonic is CLOCK_MONOTONIC in seconds, the clock of Python's time.monotonic() that the
// harness stamps its run with.
func monotonic() float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}

func runClient(args []string) (int, error) {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	addr := fs.String("addr", "", "server address")
	port := fs.Int("port", 0, "server UDP port")
	nbytes := fs.Int64("bytes", 0, "download this many bytes")
	duration := fs.Float64("duration-s", 0, "download for this many seconds")
	logPath := fs.String("log", "", "JSON lines progress (default stdout)")
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	if *addr == "" || *port <= 0 {
		return 0, errors.New("client needs --addr and --port")
	}
	if (*nbytes > 0) == (*duration > 0) {
		return 0, errors.New("client needs exactly one of --bytes N (N > 0) or --duration-s S (S > 0)")
	}
	out := os.Stdout
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		out = f
	}
	enc := json.NewEncoder(out)

	raddr, err := net.ResolveUDPAddr("udp", net.JoinHostPort(*addr, strconv.Itoa(*port)))
	if err != nil {
		return 0, err
	}
	udp, err := net.ListenUDP("udp", nil)
	if err != nil {
		return 0, err
	}
	tr := &quic.Transport{Conn: udp} // quic-go enlarges the socket buffers itself (7 MiB)
	defer tr.Close()
	tlsConf := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{alpn}} // self-signed test cert
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	tStart := monotonic()
	conn, err := tr.Dial(ctx, raddr, tlsConf, quicConfig())
	cancel()
	if err != nil {
		return 0, err
	}
	stream, err := conn.OpenStreamSync(context.Background())
	if err != nil {
		return 0, err
	}
	request := *nbytes
	if *duration > 0 {
		request = -1
	}
	if _, err := fmt.Fprintf(stream, "GET %d\n", request); err != nil {
		return 0, err
	}

	var received atomic.Int64
	digest := sha256.New()
	finished := make(chan bool, 1) // true: the stream ended with FIN
	go func() {
		buf := make([]byte, chunk)
		for {
			n, err := stream.Read(buf)
			digest.Write(buf[:n])
			received.Add(int64(n))
			if err != nil {
				finished <- errors.Is(err, io.EOF)
				return
			}
		}
	}()

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	var deadline <-chan time.Time
	if *duration > 0 {
		deadline = time.After(time.Duration(*duration * float64(time.Second)))
	}
	tick := time.NewTicker(reportInterval)
	defer tick.Stop()
	line := func() report {
		return report{
			TS:     monotonic(),
			Bytes:  received.Load(),
			SRTTms: float64(conn.ConnectionStats().SmoothedRTT) / float64(time.Millisecond),
		}
	}
	complete, readerDone := false, false
loop:
	for {
		select {
		case complete = <-finished:
			readerDone = true
			break loop
		case <-deadline:
			break loop
		case <-stop:
			break loop
		case <-tick.C:
			if err := enc.Encode(line()); err != nil {
				return 0, err
			}
		}
	}
	if !readerDone {
		// the reader goroutine still owns the digest: end the connection and wait for it
		conn.CloseWithError(0, "done")
		<-finished
	}
	final := line()
	final.SHA256 = hex.EncodeToString(digest.Sum(nil))
	final.Final = true
	final.Done = &complete
	final.Elapsed = monotonic() - tStart
	final.RcvBuf = rcvbuf(udp)
	if err := enc.Encode(final); err != nil {
		return 0, err
	}
	conn.CloseWithError(0, "done")
	if complete || *duration > 0 {
		return 0, nil
	}
	return 1, nil
}

// rcvbuf is the UDP receive buffer as the kernel set it (it doubles what was asked).
func rcvbuf(udp *net.UDPConn) int {
	raw, err := udp.SyscallConn()
	if err != nil {
		return 0
	}
	size := 0
	_ = raw.Control(func(fd uintptr) {
		size, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
	})
	return size
}
