# mpi-deadlock - plain Makefile with pkg-config.
#
#   make                 build build/mpi-deadlock
#   make test            unit and end-to-end tests (one Criterion run)
#   make unit            unit tests only (no MPI needed)
#   make asan            build and test with ASan + UBSan in build-asan/
#   make valgrind        unit tests under valgrind
#   make bench           benchmarks: one "name: value unit" line per figure
#   make bench-merge     only the merge of 1,024 x 1,024 ranks' partial snapshots
#   make bench-accuracy  every sample N times (N=3) on both Open MPI setups:
#                        precision, recall, line accuracy of the verdicts
#   make fuzz            fuzz the snapshot reader and report writers (10M runs)
#   make install PREFIX=DIR
#
# Each variant builds in its own folder (BUILD=...).

PREFIX ?= /usr/local
BUILD ?= build
CC ?= cc

WARN = -std=gnu11 -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes \
       -Wmissing-prototypes -Wwrite-strings -Wvla -fno-common
ifeq ($(CI),true)
WARN += -Werror
endif

PKGS = libelf libunwind-generic yajl
# igraph: the tests' oracle for the wait-for graph's strong components.
TEST_PKGS = criterion igraph
DWARF_CFLAGS = -I/usr/include/libdwarf
DWARF_LIBS = -ldwarf

CPPFLAGS += -Iinclude -D_GNU_SOURCE
OPT ?= -O2 -g
CFLAGS += $(OPT) $(WARN) $(shell pkg-config --cflags $(PKGS)) $(DWARF_CFLAGS) $(SAN)
LDFLAGS += $(SAN) -rdynamic
LDLIBS += $(shell pkg-config --libs $(PKGS)) $(DWARF_LIBS) -ldl -lm -lpthread

LIB_SRC = $(wildcard common/*.c snapshot/*.c collector/*.c graph/*.c analyzer/*.c)
MAIN_SRC = $(wildcard main/*.c)
TEST_SRC = $(wildcard tests/*_test.c tests/support/*.c)

# The type provider's sources are compiled into the binary (embed.sh),
# so a build anywhere (BUILD=DIR, an install) finds them.
TYPEPROV = $(wildcard collector/typeprov/*.c) collector/typeprov/peruse.h
LIB_OBJ = $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/typeprov.o
MAIN_OBJ = $(MAIN_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ = $(TEST_SRC:%.c=$(BUILD)/%.o)

BIN = $(BUILD)/mpi-deadlock

# The interposition library (track/): built with the MPI headers of the
# mpicc in PATH, not linked against libmpi (it binds to the rank's own).
MPICC ?= mpicc
MPI_CFLAGS := $(shell $(MPICC) --showme:compile 2>/dev/null || $(MPICC) -compile-info 2>/dev/null | sed 's/^[^ ]* //')
TRACKLIB = $(if $(MPI_CFLAGS),$(BUILD)/lib/mpi-deadlock/libmdtrack.so)
# A second build against MPICH's mpi.h (integer handles) for Hydra's
# jobs, when an MPICH mpicc is there: MPICH_CC, else the -g MPICH of
# scripts/build-mpich.sh, else Debian's mpicc.mpich.
MPICH_CC ?= $(firstword $(wildcard /var/cache/mpi-deadlock/mpich-4.0.2-g/bin/mpicc) $(shell command -v mpicc.mpich 2>/dev/null))
# Its -I and -D flags only: the library is never linked against an MPI.
MPICH_CFLAGS := $(if $(MPICH_CC),$(filter -I% -D%,$(shell $(MPICH_CC) -compile-info 2>/dev/null)))
TRACKLIB_MPICH = $(if $(MPICH_CFLAGS),$(BUILD)/lib/mpi-deadlock/mpich/libmdtrack.so)
# -mno-red-zone: track/mdtrack.c's x86-64 trampoline call.
TRACK_CFLAGS = -O2 -g -fPIC -shared -fvisibility=hidden $(if $(filter x86_64,$(shell uname -m)),-mno-red-zone)
LIBMD = $(BUILD)/libmd.a
TESTBIN = $(BUILD)/md-tests

.PHONY: all test unit e2e asan valgrind bench bench-merge bench-accuracy fuzz install clean samples types

all: $(BIN) $(TRACKLIB) $(TRACKLIB_MPICH)


$(BUILD)/lib/mpi-deadlock/libmdtrack.so: track/mdtrack.c track/mdtrack_post.h include/mdtrack.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(MPI_CFLAGS) $(WARN) $(TRACK_CFLAGS) -o $@ $< -ldl

$(BUILD)/lib/mpi-deadlock/mpich/libmdtrack.so: track/mdtrack.c track/mdtrack_post.h include/mdtrack.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(MPICH_CFLAGS) $(WARN) $(TRACK_CFLAGS) -o $@ $< -ldl

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/gen/typeprov.c: $(TYPEPROV) scripts/embed.sh
	@mkdir -p $(dir $@)
	sh scripts/embed.sh $(TYPEPROV) > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/typeprov.o: $(BUILD)/gen/typeprov.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(LIBMD): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(MAIN_OBJ) $(LIBMD)
	$(CC) $(LDFLAGS) -o $@ $(MAIN_OBJ) $(LIBMD) $(LDLIBS)

# Synthetic snapshots for the benchmarks (scripts/bench-snap.sh).
$(BUILD)/gensnap: $(BUILD)/tools/gensnap.o $(LIBMD)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBMD) $(LDLIBS)

# The files of a fake Open MPI job (tests/fakejob), never run: the
# collector's tests on fake targets lay them out in fake processes.
FAKEJOB = $(BUILD)/tests/fakejob
FAKEJOB_FILES = $(FAKEJOB)/mpirun $(FAKEJOB)/libmpi.so.40 $(FAKEJOB)/app

$(TESTBIN): $(TEST_OBJ) $(LIBMD) $(BUILD)/tests/fakedll.so $(BUILD)/tests/fakedll_v9.so \
		$(BUILD)/tests/fakempich.so $(BUILD)/tests/fakempich_notype.so $(FAKEJOB_FILES)
	$(CC) $(LDFLAGS) -o $@ $(TEST_OBJ) $(LIBMD) $(LDLIBS) $(shell pkg-config --libs $(TEST_PKGS))

$(FAKEJOB)/mpirun: tests/fakejob/mpirun.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -g -O0 -o $@ $<
$(FAKEJOB)/libmpi.so.40: tests/fakejob/libmpi.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -g -O0 -fPIC -shared -Wl,-soname,libmpi.so.40 -o $@ $<
$(FAKEJOB)/app: tests/fakejob/app.c $(FAKEJOB)/libmpi.so.40
	$(CC) $(WARN) -g -O0 -o $@ $< -L$(FAKEJOB) -l:libmpi.so.40

# A fake message-queue DLL for the host's unit tests (and one of a wrong
# interface version).
$(BUILD)/tests/fakedll.so: tests/fakedll/fakedll.c tests/fakedll/fakedll.h include/mqd.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) -g -fPIC -shared -o $@ $<
$(BUILD)/tests/fakedll_v9.so: tests/fakedll/fakedll.c tests/fakedll/fakedll.h include/mqd.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) -g -fPIC -shared -DFAKE_COMPAT=9 -o $@ $<
# One that behaves like MPICH's libtvmpich.so (doc/mpich.md), and the
# same asking for a type the tests do not have.
$(BUILD)/tests/fakempich.so: tests/fakedll/fakempich.c tests/fakedll/fakedll.h include/mqd.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) -g -fPIC -shared -o $@ $<
$(BUILD)/tests/fakempich_notype.so: tests/fakedll/fakempich.c tests/fakedll/fakedll.h include/mqd.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(WARN) -g -fPIC -shared -DFAKE_MISSING_TYPE='"MPIR_Nothing"' -o $@ $<

$(BUILD)/tests/%.o: CFLAGS += $(shell pkg-config --cflags $(TEST_PKGS)) -Itests

# The end-to-end tests need the samples built against each Open MPI setup.
samples: $(BIN)
	@scripts/build-samples.sh $(BUILD)

# All tests, one Criterion run (scripts/run-tests.sh): the skips are
# listed with their reasons (Criterion counts them as passing; with
# CI=true a skip not expected here fails: tests/expected-skips) and the
# closing line is Criterion's "Synthesis" with the skips counted.
RUNTESTS = scripts/run-tests.sh $(abspath $(BUILD))

test: $(BIN) $(TRACKLIB) $(TRACKLIB_MPICH) $(TESTBIN) samples
	$(RUNTESTS) $(TESTFLAGS)

unit: $(BIN) $(TRACKLIB) $(TRACKLIB_MPICH) $(TESTBIN)
	$(RUNTESTS) --filter '!(e2e*)/*' $(TESTFLAGS)

e2e: $(BIN) $(TRACKLIB) $(TRACKLIB_MPICH) $(TESTBIN) samples
	$(RUNTESTS) --filter 'e2e*/*' $(TESTFLAGS)

asan:
	LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp) $(MAKE) BUILD=build-asan SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" OPT="-O1 -g" test

valgrind: $(TESTBIN)
	MD_BIN=$(abspath $(BIN)) MD_BUILD=$(abspath $(BUILD)) valgrind --trace-children=yes --error-exitcode=1 --leak-check=full $(TESTBIN) --jobs 1 --filter '!(e2e*)/*'

# The analyzer's benchmark driver (scripts/bench-analyze.sh).
$(BUILD)/benchanalyze: $(BUILD)/tools/benchanalyze.o $(LIBMD)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The front end's merge of many partial snapshots (scripts/bench-merge.sh).
$(BUILD)/benchmerge: $(BUILD)/tools/benchmerge.o $(LIBMD)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

bench: $(BIN) $(TRACKLIB)
	@scripts/bench.sh $(BUILD)

# 1,024 partial snapshots of 1,024 ranks merged (also part of make bench).
bench-merge:
	@scripts/bench-merge.sh $(BUILD)

# Beside make bench: it runs every sample N times (minutes, not seconds).
bench-accuracy: $(BIN)
	@scripts/bench-accuracy.sh $(BUILD)

fuzz:
	@scripts/fuzz.sh

install: $(BIN) $(TRACKLIB) $(TRACKLIB_MPICH) $(TRACKLIB_MPICH)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/libexec/mpi-deadlock $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/mpi-deadlock
	$(if $(TRACKLIB),install -d $(DESTDIR)$(PREFIX)/lib/mpi-deadlock && install -m 755 $(TRACKLIB) $(DESTDIR)$(PREFIX)/lib/mpi-deadlock/libmdtrack.so)
	$(if $(TRACKLIB_MPICH),install -d $(DESTDIR)$(PREFIX)/lib/mpi-deadlock/mpich && install -m 755 $(TRACKLIB_MPICH) $(DESTDIR)$(PREFIX)/lib/mpi-deadlock/mpich/libmdtrack.so)
	install -m 755 scripts/gstack $(DESTDIR)$(PREFIX)/libexec/mpi-deadlock/gstack
	install -m 644 doc/mpi-deadlock.1 $(DESTDIR)$(PREFIX)/share/man/man1/mpi-deadlock.1

clean:
	rm -rf build build-asan

-include $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(wildcard $(BUILD)/tools/*.d)
