//! HDF5 reading for scatterlab, built on the pure-Rust `hdf5-reader` crate.
//!
//! `hdf5-reader` parses the file structure; this crate closes its gaps for detector data
//! (docs/plans/hdf5-loading.md): our own bitshuffle+LZ4 (32008) and HDF5-LZ4 (32004) decoders,
//! raw chunk access through its public index walkers, and storage back ends.
