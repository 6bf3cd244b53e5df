//! STORE fill on the device (work in progress).
