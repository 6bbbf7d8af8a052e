//! Tests of the transitions.
