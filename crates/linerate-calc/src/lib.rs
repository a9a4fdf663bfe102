//! Pure network arithmetic: what a link, a bus or a path can carry. No I/O.

pub mod bus;
