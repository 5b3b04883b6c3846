//! Async readback that works unchanged natively and in the browser.
//!
//! Natively `map_async` completes during `Device::poll`; on the web `poll` is a no-op and the
//! browser's event loop completes the mapping, so the result arrives through a one-shot channel.

use crate::{GpuContext, GpuError};

/// Reads the first `len` elements of a `MAP_READ` buffer back to the CPU.
pub async fn read_buffer<T: bytemuck::Pod>(ctx: &GpuContext, buffer: &wgpu::Buffer, len: usize) -> Result<Vec<T>, GpuError> {
    let bytes = (len * std::mem::size_of::<T>()) as u64;
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let slice = buffer.slice(..bytes);
    let (tx, rx) = futures_channel::oneshot::channel();
    slice.map_async(wgpu::MapMode::Read, move |result| {
        // The receiver only disappears if the caller was dropped; nothing to report then.
        let _ = tx.send(result);
    });
    #[cfg(not(target_arch = "wasm32"))]
    ctx.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| GpuError::Readback(e.to_string()))?;
    #[cfg(target_arch = "wasm32")]
    let _ = ctx;
    rx.await.map_err(|_| GpuError::Readback("mapping callback dropped".into()))?.map_err(|e| GpuError::Readback(e.to_string()))?;
    let out = {
        let view = slice.get_mapped_range().map_err(|e| GpuError::Readback(e.to_string()))?;
        bytemuck::cast_slice::<u8, T>(&view).to_vec()
    };
    buffer.unmap();
    Ok(out)
}
