# The two commands the README promises.
.PHONY: install test lint
install:
	cargo install --locked --path crates/linerate

test:
	cargo test --workspace --locked

lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --locked -- -D warnings
