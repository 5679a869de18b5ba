# xlogfs — see README.md. `make bench` and `make test` are the two commands a
# fresh Debian machine needs (run as root: they install what is missing).

# Go 1.26 lives in /usr/local/go on the machines this runs on; tests that
# build the binary run "go" themselves, so it goes on PATH for them too.
export PATH := /usr/local/go/bin:$(or $(PATH),/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)

GO      ?= go
BIN     := bin/xlogfs
# Every source file at any depth (make's own wildcard, no shell): the binary
# depends on the assembly kernels and their headers too.
rwildcard = $(foreach d,$(wildcard $(1:=/*)),$(call rwildcard,$(d),$(2)) $(filter $(subst *,%,$(2)),$(d)))
SOURCES := $(call rwildcard,.,*.go *.s *.h)
GOFILES := $(filter %.go,$(SOURCES))

.PHONY: all build test bench bench-deps vet deps test-go test-lockorder test-uring test-passthrough-off test-sync-log test-ppc64 crashtest mutation

all: build

build: $(BIN)

# -buildvcs=auto: the commit goes into the binary (xlogfs version) whatever
# GOFLAGS says, wherever git can tell it (not in a git worktree).
$(BIN): $(SOURCES) go.mod go.sum
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/xlogfs

# deps installs the Debian packages the tests and benches run: fusermount3
# (fuse3), dbench, and qemu-user-static for the POWER kernels' tests.
deps:
	@missing=""; \
	command -v fusermount3 >/dev/null 2>&1 || missing="$$missing fuse3"; \
	command -v dbench >/dev/null 2>&1 || missing="$$missing dbench"; \
	command -v qemu-ppc64le-static >/dev/null 2>&1 || missing="$$missing qemu-user-static"; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y $$missing || { apt-get update && apt-get install -y $$missing; }; \
	fi

vet:
	$(GO) vet ./...
	@bad=$$(gofmt -l $(GOFILES)); if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi

test: deps vet build test-go test-lockorder test-uring test-passthrough-off test-sync-log test-ppc64

# -count=1: the end-to-end tests run the xlogfs binary, which go test's
# cache does not know they depend on; a cached pass would prove nothing.
test-go:
	$(GO) test -p 1 -count=1 -timeout 20m ./...

# The journal's fast tests (-short) in the build that checks the lock order
# (-tags lockorder, journal/internal/lockorder): every acquire of a ranked
# mutex out of the order journal/doc.go gives (Locking) panics.
test-lockorder:
	$(GO) test -short -count=1 -timeout 20m -tags lockorder ./journal/internal/lockorder ./journal ./journal/datafile ./journal/xlog

# The end-to-end suite (posix, crash, e2e) again over FUSE's io_uring
# transport (--transport uring on every mount), with every open that writes
# in passthrough (--sync-writes passthrough); it prints why and passes
# when this machine cannot (not root, a kernel without FUSE over io_uring).
test-uring:
	XLOGFS_TEST_TRANSPORT=uring XLOGFS_TEST_SYNC_WRITES=passthrough $(GO) test -count=1 -timeout 20m ./tests

# The end-to-end suite once more with every open that writes on the log
# route (--sync-writes log: through the daemon, small writes logged with
# their bytes); the default run takes auto, which picks per file.
test-sync-log:
	XLOGFS_TEST_SYNC_WRITES=log $(GO) test -count=1 -timeout 20m ./tests

# The end-to-end suite once more with kernel passthrough off, so posixtest,
# the crash tests and the e2e tests hold for writes through the daemon as
# well as for passthrough (the default where the kernel allows it).
test-passthrough-off:
	XLOGFS_TEST_PASSTHROUGH=off $(GO) test -count=1 -timeout 20m ./tests

# The POWER kernels run under qemu-user; big- and little-endian both.
# QEMU_CPU=power8 is the oldest CPU the vpmsum kernel claims (qemu's default
# is newer), so an instruction from a later ISA would fault here. Emulated
# VPMSUMD is slow: cksum's exhaustive tests take about 1.5 min on ppc64le
# (where stdlib's kernel is vector too) and 20 s on ppc64, on 2 cores.
test-ppc64:
	GOARCH=ppc64le QEMU_CPU=power8 $(GO) test -timeout 20m -exec qemu-ppc64le-static ./cksum/... ./ppc64
	GOARCH=ppc64 QEMU_CPU=power8 $(GO) test -timeout 20m -exec qemu-ppc64-static ./cksum/... ./ppc64

# The bench installs nothing itself (it names a missing package and stops):
# bench-deps installs what this run needs, fuse3 for every workload, dbench
# or MariaDB and sysbench only when BENCH_ARGS asks for that workload, e.g.
# make bench BENCH_ARGS="--workload dbench", and xfsprogs (mkfs.xfs) and
# linux-perf (perf) only when it asks for the kernel XFS baseline
# (--baseline xfs, or a list holding xfs). It does not wait for the test
# suite's packages.
BENCH_ARGS ?=

bench: build bench-deps
	$(BIN) bench $(BENCH_ARGS)

bench-deps:
	@missing=""; \
	command -v fusermount3 >/dev/null 2>&1 || missing="$$missing fuse3"; \
	case " $(BENCH_ARGS) " in \
	*dbench*) command -v dbench >/dev/null 2>&1 || missing="$$missing dbench";; \
	*mariadb*) { command -v mariadbd >/dev/null 2>&1 || test -x /usr/sbin/mariadbd; } || missing="$$missing mariadb-server"; \
		command -v sysbench >/dev/null 2>&1 || missing="$$missing sysbench";; \
	esac; \
	baselines=$$(echo " $(BENCH_ARGS) " | sed -n 's/.*--baseline[ =]\([^ ]*\).*/\1/p'); \
	case ",$$baselines," in \
	*,xfs,*) { command -v mkfs.xfs >/dev/null 2>&1 || test -x /usr/sbin/mkfs.xfs || test -x /sbin/mkfs.xfs; } || missing="$$missing xfsprogs"; \
		command -v perf >/dev/null 2>&1 || missing="$$missing linux-perf";; \
	esac; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y --no-install-recommends $$missing || { apt-get update && apt-get install -y --no-install-recommends $$missing; }; \
	fi

# The journal's crash tests at full strength: 100,000 crash states each
# (make test runs 2,000 of each): the randomized crash test (log device
# torn, media faults in durable records), and the whole-store power-loss
# test (every file of the store on a simulated host filesystem; half its
# states also recovered with a media fault: a flipped bit, zeroed or stale
# block in a durable log record, or a damaged checkpoint file).
# XLOGFS_CRASH_SEED=N and XLOGFS_POWERLOSS_SEED=N rerun a failing seed.
crashtest:
	XLOGFS_CRASH_STATES=100000 $(GO) test -count=1 -run TestRandomizedCrashRecovery -v -timeout 60m ./journal
	XLOGFS_POWERLOSS_STATES=100000 $(GO) test -count=1 -run TestPowerLoss -v -timeout 60m ./journal

# Mutation testing: plants each deliberate bug of tests/mutation/mutants.go
# in a temporary copy of the tree, one at a time, and runs the tests listed
# to catch it; fails if one survives. A minute or two on 2 idle cores, so
# not part of "make test" (which only checks that the list still matches
# the code). Needs what the end-to-end tests need (deps).
mutation: deps
	$(GO) run ./tests/mutation

# MariaDB on xlogfs under sysbench load, with the daemon killed mid-run and
# InnoDB's recovery checked, eight times (tests/mysql_test.go, build tag
# mysql: about a minute plus MariaDB's install, so not part of "make test").
# Installs mariadb-server and sysbench when missing; the test runs a mariadbd
# of its own on the mount, never the system service. -count=1: a cached pass
# of a crash test proves nothing.
.PHONY: e2e-mysql
e2e-mysql: deps
	@missing=""; \
	{ command -v mariadbd >/dev/null 2>&1 || test -x /usr/sbin/mariadbd; } || missing="$$missing mariadb-server"; \
	command -v sysbench >/dev/null 2>&1 || missing="$$missing sysbench"; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y --no-install-recommends $$missing || { apt-get update && apt-get install -y --no-install-recommends $$missing; }; \
	fi
	$(GO) test -count=1 -tags mysql -run MySQL -v -timeout 30m ./tests

# The command line's generated documents: docs/commands.md (every
# command's --help; a test fails when it is stale) and the man pages
# (section 8, cobra/doc's, into man/).
.PHONY: docs man install
docs: $(BIN)
	$(BIN) gen-docs --markdown docs/commands.md

man: $(BIN)
	rm -rf man && $(BIN) gen-docs --man man

# install puts the binary in $(PREFIX)/bin and the man pages in
# $(PREFIX)/share/man/man8 (PREFIX=/usr/local; DESTDIR for packaging).
PREFIX ?= /usr/local
install: $(BIN) man
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/xlogfs
	install -d $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0644 man/*.8 $(DESTDIR)$(PREFIX)/share/man/man8/
