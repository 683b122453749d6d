//! The one integration-test binary: real repositories, real binaries.
mod gate;
mod util;
