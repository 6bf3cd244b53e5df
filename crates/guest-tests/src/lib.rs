//! Whole-program tests of the guests in guests/ (see tests/).
