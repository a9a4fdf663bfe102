# The two commands the README promises.
.PHONY: install test lint
# The release profile keeps line tables for profiling; the installed binary does not need
# them (71 MB with them, 19 MB without): strip the debug information, keep the symbols.
install:
	cargo install --locked --path crates/linerate --config 'profile.release.strip="debuginfo"'

test:
	cargo test --workspace --locked

lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --locked -- -D warnings
