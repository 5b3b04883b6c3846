//! One archive of a whole export (the browser's single "Download", the desktop's "Export as
//! zip"): every file of [`super::ExportArray::files`] in one `.zip` — PNGs stored (already
//! compressed), the raw arrays and JSON deflated — by the `zip` crate.

use std::io::Write;

use zip::write::SimpleFileOptions;
use zip::CompressionMethod;

use super::ExportError;

/// The bytes of a zip holding `files` (name, bytes) in order, at the archive's top level.
pub fn zip_bytes(files: &[(String, Vec<u8>)]) -> Result<Vec<u8>, ExportError> {
    let err = |e: &dyn std::fmt::Display| ExportError::Encode { format: "zip", message: e.to_string() };
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in files {
        let method = if name.ends_with(".png") { CompressionMethod::Stored } else { CompressionMethod::Deflated };
        // Large arrays (a 4k × 4k scan's f64 image is 128 MiB) need the ZIP64 extension.
        let options = SimpleFileOptions::default().compression_method(method).large_file(bytes.len() as u64 >= u64::from(u32::MAX));
        writer.start_file(name.as_str(), options).map_err(|e| err(&e))?;
        writer.write_all(bytes).map_err(|e| err(&e))?;
    }
    let cursor = writer.finish().map_err(|e| err(&e))?;
    Ok(cursor.into_inner())
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn the_zip_reads_back_entry_for_entry() {
        let files = vec![
            ("a.png".to_owned(), vec![137, 80, 78, 71, 1, 2, 3]),
            ("a.npy".to_owned(), (0..10_000u32).flat_map(|i| (i % 7).to_le_bytes()).collect()),
            ("a.json".to_owned(), b"{\"product\": \"a\"}".to_vec()),
        ];
        let bytes = zip_bytes(&files).unwrap();
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(&bytes)).unwrap();
        assert_eq!(archive.len(), 3);
        for (i, (name, want)) in files.iter().enumerate() {
            let mut entry = archive.by_index(i).unwrap();
            assert_eq!(entry.name().unwrap(), name.as_str());
            let method = if name.ends_with(".png") { CompressionMethod::Stored } else { CompressionMethod::Deflated };
            assert_eq!(entry.compression(), method, "{name}");
            let mut got = Vec::new();
            entry.read_to_end(&mut got).unwrap();
            assert_eq!(&got, want, "{name}");
        }
        // The repetitive array deflates: the archive is smaller than its contents.
        assert!(bytes.len() < files.iter().map(|f| f.1.len()).sum::<usize>() / 2);
    }
}
