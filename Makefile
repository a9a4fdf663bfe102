# The commands the README promises.
.PHONY: install test lint freebsd lint-freebsd
# The release profile keeps line tables for profiling; the installed binary does not need
# them (71 MB with them, 19 MB without): strip the debug information, keep the symbols.
install:
	cargo install --locked --path crates/linerate --config 'profile.release.strip="debuginfo"'

test:
	cargo test --workspace --locked

lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --locked -- -D warnings

# FreeBSD, built and linked on Linux: cargo-zigbuild drives zig's C compiler and linker
# (`pip install ziglang cargo-zigbuild`, `rustup target add x86_64-unknown-freebsd`), which
# compile SQLite and OpenSSL from source for FreeBSD and link against FreeBSD's libc. The
# binary and its lint share these settings so that the C libraries are compiled once. No debug
# information is generated for linerate (the installed Linux binary strips it too) and nothing
# is stripped: zig's linker, asked to strip the debug information, drops the symbols as well
# (the binary keeps the standard library's debug information: about 50 MB).
FREEBSD := x86_64-unknown-freebsd
FREEBSD_CARGO := --release --locked --target $(FREEBSD) \
	--config 'profile.release.debug=false' --config 'profile.release.strip=false'
FREEBSD_BIN = $${CARGO_TARGET_DIR:-target}/$(FREEBSD)/release/linerate

freebsd:
	cargo zigbuild $(FREEBSD_CARGO) -p linerate
	@kind=$$(file -b "$(FREEBSD_BIN)"); echo "$(FREEBSD_BIN): $$kind"; \
	case "$$kind" in *FreeBSD*) ;; \
	*) echo "make freebsd: $(FREEBSD_BIN) is not a FreeBSD executable" >&2; exit 1;; esac

lint-freebsd:
	cargo-zigbuild clippy $(FREEBSD_CARGO) --workspace --all-targets -- -D warnings
