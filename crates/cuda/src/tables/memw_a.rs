//! MEMW_A fill on the device (work in progress).
