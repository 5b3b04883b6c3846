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

impl GpuContext {
    /// Ends `encoder` with a copy of the first `len` elements of `source` (a `COPY_SRC` buffer)
    /// into a new staging buffer, submits it (errors name `operation`) and reads the copy back
    /// asynchronously ([`read_buffer`]): the tail of every dispatch whose output comes back.
    /// A copy the device cannot make (beyond `source`, or not a multiple of 4 bytes) is a typed
    /// error before anything is submitted.
    pub async fn submit_and_read<T: bytemuck::Pod>(&self, mut encoder: wgpu::CommandEncoder, operation: &str, source: &wgpu::Buffer, len: usize) -> Result<Vec<T>, GpuError> {
        let bytes = (len * std::mem::size_of::<T>()) as u64;
        if bytes > source.size() || !bytes.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT) {
            return Err(GpuError::Device {
                operation: operation.to_owned(),
                message: format!("cannot read back {bytes} bytes of a {}-byte buffer (copies are whole multiples of {} bytes)", source.size(), wgpu::COPY_BUFFER_ALIGNMENT),
            });
        }
        // A zero-sized buffer is invalid; an empty read copies nothing and maps nothing.
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(operation),
            size: bytes.max(wgpu::COPY_BUFFER_ALIGNMENT),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        if bytes > 0 {
            encoder.copy_buffer_to_buffer(source, 0, &staging, 0, bytes);
        }
        self.submit_checked(operation, encoder.finish()).await?;
        read_buffer(self, &staging, len).await
    }

    /// The first `len` elements of `source` (a `COPY_SRC` buffer), copied and read back in a
    /// submission of their own ([`GpuContext::submit_and_read`]).
    pub async fn read_back<T: bytemuck::Pod>(&self, operation: &str, source: &wgpu::Buffer, len: usize) -> Result<Vec<T>, GpuError> {
        self.submit_and_read(self.encoder(operation), operation, source, len).await
    }
}
