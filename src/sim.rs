//! The discrete-event simulator: requests through a fleet of units behind a dispatcher.
