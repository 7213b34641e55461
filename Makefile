# touchbridge — see README.md. `make run` and `make test` do all set-up on a fresh Debian 12.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(DESTDIR)$(PREFIX)/bin
MANDIR = $(DESTDIR)$(PREFIX)/share/man/man1
SWIFT ?= swift
ARGS ?=
RELEASE_BIN = .build/release/touchbridge

.PHONY: all build deps run test bench install uninstall clean

all: build

build: deps
	$(SWIFT) build -c release --product touchbridge

deps:
	@scripts/deps.sh

run: build
	@scripts/run.sh $(RELEASE_BIN) $(ARGS)

# One debug build of everything (the daemon, the X observer, the tests), then every test.
test: deps
	mandoc -Tlint -Wwarning man/touchbridge.1
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# Release build of everything (daemon, observer, harness, C reference), then every benchmark on a
# private Xvfb: a table on stdout, the same as JSON in .bench/ (see Benchmarks/README.md).
bench: deps
	@scripts/bench-deps.sh
	$(SWIFT) build -c release
	python3 Benchmarks/run.py .build/release

install: build
	install -d $(BINDIR) $(MANDIR)
	install -m 755 $(RELEASE_BIN) $(BINDIR)/touchbridge
	install -m 644 man/touchbridge.1 $(MANDIR)/touchbridge.1

uninstall:
	rm -f $(BINDIR)/touchbridge $(MANDIR)/touchbridge.1

clean:
	rm -rf .build .bench
