# touchbridge — see README.md and docs/building.md. `make run` and `make test` do all set-up on a fresh Debian 12:
# `make run` installs the build set (and Xvfb when there is no desktop to serve), `make test` every set (scripts/deps.sh).
# `make run` builds the debug product only (DEBUG_BUILD): minutes from scratch on 2 cores, where the release build
# (`make build`, RELEASE_BUILD) takes far longer.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(DESTDIR)$(PREFIX)/bin
MANDIR = $(DESTDIR)$(PREFIX)/share/man/man1
# systemd looks for user units in $(PREFIX)/lib/systemd/user for /usr and /usr/local.
UNITDIR = $(DESTDIR)$(PREFIX)/lib/systemd/user
SWIFT ?= swift
ARGS ?=
# make fuzz: how long each libFuzzer target runs; make test runs each for FUZZ_CI_SECONDS.
FUZZ_SECONDS ?= 300
FUZZ_CI_SECONDS ?= 13
# make fuzz: how many random input sequences the "nothing left behind" property test runs, per output
# failure rate (make test runs 3,000, its default).
PROPERTY_SEQUENCES ?= 1000000
FUZZ_TARGETS = poseai tuio web impress
RELEASE_BIN = .build/release/touchbridge
DEBUG_BIN = .build/debug/touchbridge
# make deb: the package's version is the binary's own (`touchbridge --version`, from
# Sources/touchbridge/Touchbridge.swift); DEB_VERSION overrides it.
VERSION := $(shell sed -n 's/^ *static let version = "\([^"]*\)".*/\1/p' Sources/touchbridge/Touchbridge.swift)
DEB_VERSION ?= $(VERSION)
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB = touchbridge_$(DEB_VERSION)_$(DEB_ARCH).deb

.PHONY: all build deps deps-build deps-package config-reference run test test-vm test-desktops test-portal deb test-deb fuzz bench install uninstall clean

all: build

# Every release build, the same for `make build`, `make bench` and `make deb` (the bench measures what the package
# ships): the Swift runtime linked in (only the pages it uses are resident, and it runs without a Swift
# toolchain), and every module, the dependencies' too, with a section per function (Swift's -function-sections,
# C's -ffunction-sections -fdata-sections), so that lld drops dead code (--gc-sections) and can place the
# functions that run while serving together. Package.swift adds touchbridge's linker settings (lld, packed
# relocations, no exported symbols, -z now, the order of scripts/release-link/) and, for the daemon's own
# modules, no run-time exclusivity checks (`hotPath`).
# A tree built before these flags keeps its Swift objects (SwiftPM does not recompile them when -Xswiftc flags
# change): rm -rf .build/*/release once.
# (-function-sections is a frontend option: given to swiftc as a driver option, SwiftPM 6.3's second build of
# the same tree stops on "unknown argument".)
RELEASE_BUILD = $(SWIFT) build -c release --static-swift-stdlib -Xswiftc -Xfrontend -Xswiftc -function-sections \
	-Xcc -ffunction-sections -Xcc -fdata-sections

build: deps-build
	$(RELEASE_BUILD) --product touchbridge

# `make run`'s build: the daemon's product alone (no tests, no X observer), debug (no optimiser, the Swift runtime
# the toolchain's shared one): the quickest build that serves. `make build` is the release build, for those who want it.
# Without the index store, which SwiftPM writes for editors while it compiles, by default: it took `make run`'s
# build from 202 s to 267 s on 2 cores (2026-12-06). The tests' builds keep it: on Linux SwiftPM finds the tests
# through it ("index store path does not exist" otherwise). So a `make test` after a `make run` compiles every
# module again (a flag that differs does), and make test, the VM stages and .ci/run build alike (no flags).
DEBUG_BUILD = $(SWIFT) build --disable-index-store --product touchbridge

# The Debian packages, in sets (scripts/deps.sh): `deps` all of them and the tests' browser venv; the others
# only what building or packaging needs. `make run` installs the run set (Xvfb) only when it starts one:
# with no DISPLAY and no WAYLAND_DISPLAY (scripts/run.sh).
deps:
	@scripts/deps.sh

deps-build:
	@scripts/deps.sh build

deps-package: deps-build
	@scripts/deps.sh package

run: deps-build
	$(DEBUG_BUILD)
	@scripts/run.sh $(DEBUG_BIN) $(ARGS)

# docs/configuration.md, made from the binary's --help and `config --print` (scripts/config-reference.py); run it
# after changing an option. `make test` fails while the file differs from what the binary says (FirstHourTests).
config-reference:
	$(DEBUG_BUILD)
	scripts/config-reference.py $(DEBUG_BIN) > docs/configuration.md.new
	mv docs/configuration.md.new docs/configuration.md

# One debug build of everything (the daemon, the X observer, the tests), then every test. The in-process
# lifecycle tests (TouchDaemonTests) run on their own: they wait on Swift concurrency's cooperative pool,
# which the other suites' synchronous integration tests fill for minutes on 2 cores.
# swift test's own output can lose lines (a child that inherited its event pipe), even a failed test's: each
# run also writes xUnit files into .build/test-results/, and a run that fails names its failures from them.
test: deps
	mandoc -Tlint -Wwarning man/touchbridge.1
	tsc --noEmit --checkJs --strict -p web
	$(SWIFT) build --build-tests
	mkdir -p .build/test-results
	$(SWIFT) test --skip-build --skip TouchDaemonTests --xunit-output .build/test-results/main.xml \
		|| { scripts/failed-tests.py .build/test-results/main*.xml; exit 1; }
	$(SWIFT) test --skip-build --filter TouchDaemonTests --xunit-output .build/test-results/daemon.xml \
		|| { scripts/failed-tests.py .build/test-results/daemon*.xml; exit 1; }
	$(MAKE) test-vm
	for t in $(FUZZ_TARGETS); do scripts/fuzz.sh $$t $(FUZZ_CI_SECONDS) || exit 1; done

# The uinput backend and the XTest backend against a real kernel, udev, libinput and Xorg: a qemu VM
# (image built once and cached under .build/vm/), the debug build above carried in. Fails when qemu is
# missing. See Tests/VM/README.md.
test-vm:
	Tests/VM/test.sh

# GNOME Shell 43 (Mutter) and KWin 5.27 as Wayland sessions at the VM's seat, touchbridge on uinput as
# the seat's user; its own cached image (Tests/VM/build-rootfs-desktops.sh). Not part of `make test`:
# the image and the run take about 18 min on 2 cores (Tests/VM/README.md).
test-desktops: deps
	$(SWIFT) build
	Tests/VM/test-desktops.sh

# Input without root: GNOME Shell 48 at the seat of a Debian 13 VM whose user may not write /dev/uinput;
# the RemoteDesktop portal's dialog answered with clicks into the VM (QMP), a restore token kept,
# touchbridge --backend auto taking the portal. Its own cached image (Tests/VM/build-rootfs-portal.sh).
# Not part of `make test` (Tests/VM/README.md has its times).
test-portal: deps
	$(SWIFT) build
	Tests/VM/test-portal.sh

# The Debian package $(DEB) for a machine with no Swift toolchain: the release binary (RELEASE_BUILD, the Swift
# runtime linked in, full RELRO), stripped; Depends: from dpkg-shlibdeps (scripts/deb/build.sh).
deb: deps-package
	$(RELEASE_BUILD) --product touchbridge
	scripts/deb/build.sh $(RELEASE_BIN) . $(DEB_VERSION)

# $(DEB) checked with lintian, then installed with apt, used by a non-root user at the seat (uinput
# through the package's udev rule), upgraded over and removed in the qemu VM (Tests/VM/test-deb.sh).
test-deb: deps deb
	Tests/VM/test-deb.sh $(DEB)

# libFuzzer over every decoder (swiftc -sanitize=fuzzer,address), FUZZ_SECONDS each (see scripts/fuzz.sh);
# then the random-sequence property test of the Bridge, PROPERTY_SEQUENCES sequences, on a release build.
fuzz: deps
	for t in $(FUZZ_TARGETS); do scripts/fuzz.sh $$t $(FUZZ_SECONDS) || exit 1; done
	$(SWIFT) build -c release --build-tests -Xswiftc -enable-testing --scratch-path .build-fuzz
	TOUCHBRIDGE_SEQUENCES=$(PROPERTY_SEQUENCES) $(SWIFT) test -c release --skip-build -Xswiftc -enable-testing \
		--scratch-path .build-fuzz --filter NothingLeftBehindTests

# Release build of everything (daemon, observer, harness, C reference; as `make build` and `make deb` build it), then every benchmark on a
# private Xvfb: a table on stdout, the same as JSON in .bench/ (see Benchmarks/README.md).
bench: deps
	@scripts/bench-deps.sh
	$(RELEASE_BUILD)
	python3 Benchmarks/run.py .build/release

install: build
	install -d $(BINDIR) $(MANDIR) $(UNITDIR)
	install -m 755 $(RELEASE_BIN) $(BINDIR)/touchbridge
	install -m 644 man/touchbridge.1 $(MANDIR)/touchbridge.1
	sed 's|@BINDIR@|$(PREFIX)/bin|' contrib/touchbridge.service > $(UNITDIR)/touchbridge.service
	chmod 644 $(UNITDIR)/touchbridge.service

uninstall:
	rm -f $(BINDIR)/touchbridge $(MANDIR)/touchbridge.1 $(UNITDIR)/touchbridge.service

clean:
	rm -rf .build .build-fuzz .bench .fuzz touchbridge_*.deb
