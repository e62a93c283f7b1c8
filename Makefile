# citebook — the two set-up commands are `make run` and `make test`.
GO        ?= go
DATA      ?= $(HOME)/.citebook
ADDR      ?= 127.0.0.1:8080
CITEBOOK_CORPUS ?= $(abspath ../shared/corpora)
export CITEBOOK_CORPUS

.PHONY: build run test bench fuzz vet lint

build:
	$(GO) build -o bin/citebook ./cmd/citebook

run: build
	./bin/citebook serve --data $(DATA) --addr $(ADDR)

vet:
	$(GO) vet ./...

# lint is vet, gofmt, staticcheck, and deadcode: no production code may be reachable
# only from tests (deadcode exits 0 on findings, so any output fails here).
# .ci/run installs the pinned tools; elsewhere `go install` them the same way.
GOBIN_DIR   := $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)
STATICCHECK ?= $(GOBIN_DIR)/staticcheck
DEADCODE    ?= $(GOBIN_DIR)/deadcode

lint: vet
	@out="$$("$$($(GO) env GOROOT)/bin/gofmt" -l .)"; if [ -n "$$out" ]; then echo "$$out"; echo "gofmt: these files are not formatted (gofmt -w them)"; exit 1; fi
	$(STATICCHECK) ./...
	@out="$$($(DEADCODE) -test=false ./cmd/...)" || exit 1; \
	if [ -n "$$out" ]; then echo "$$out"; echo "deadcode: production code reachable only from tests (delete it, or use it)"; exit 1; fi

# test runs every test, against the embedded store and a real Milvus server,
# and the metadata suites on SQLite and a real PostgreSQL (scripts/milvus.sh
# and scripts/postgres.sh start them unless MILVUS_ADDR or
# CITEBOOK_TEST_POSTGRES point at running servers, and the recipe stops them
# again whatever the tests' outcome).
test: vet
	. scripts/milvus.sh && . scripts/postgres.sh && { $(GO) test -count=1 -timeout 45m ./...; rc=$$?; postgres_stop; milvus_stop; exit $$rc; }

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./...

fuzz:
	scripts/fuzz.sh 10s
