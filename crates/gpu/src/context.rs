//! Device acquisition: one [`GpuContext`] per chosen adapter, with the adapter's own limits.

use crate::GpuError;

/// How to pick an adapter.
#[derive(Clone, Debug, Default)]
pub struct GpuOptions {
    /// Prefer the high-performance (discrete) adapter over a low-power one.
    pub high_performance: bool,
    /// Ask for the fallback (software) adapter, e.g. lavapipe or SwiftShader.
    pub force_fallback_adapter: bool,
}

/// A device and queue plus what we know about the adapter behind them.
#[derive(Clone, Debug)]
pub struct GpuContext {
    /// The wgpu device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// Adapter name, backend and type, as the UI and provenance show them.
    pub adapter_info: wgpu::AdapterInfo,
    /// The limits the device was created with (the adapter's own, requested explicitly).
    pub limits: wgpu::Limits,
}

impl GpuContext {
    /// Requests an adapter and a device with the adapter's full limits.
    ///
    /// Natively the backends come from `WGPU_BACKEND` if set (e.g. `vulkan`), else all native ones.
    pub async fn new(options: &GpuOptions) -> Result<Self, GpuError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let power = if options.high_performance { wgpu::PowerPreference::HighPerformance } else { wgpu::PowerPreference::default() };
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: power,
                force_fallback_adapter: options.force_fallback_adapter,
                compatible_surface: None,
                apply_limit_buckets: false,
            })
            .await
            .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        Self::from_adapter(&adapter).await
    }

    /// Creates the device on an adapter the caller already holds (the app reuses eframe's).
    pub async fn from_adapter(adapter: &wgpu::Adapter) -> Result<Self, GpuError> {
        let limits = adapter.limits();
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("scatterlab compute"),
                required_features: wgpu::Features::empty(),
                required_limits: limits.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::RequestDevice(e.to_string()))?;
        Ok(Self::from_device(device, queue, adapter.get_info()))
    }

    /// Wraps an existing device (for example eframe's render device).
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue, adapter_info: wgpu::AdapterInfo) -> Self {
        let limits = device.limits();
        Self { device, queue, adapter_info, limits }
    }

    /// One line naming adapter and backend, e.g. `"llvmpipe (LLVM 15.0.6, 256 bits) / vulkan
    /// (software adapter, slow)"`: a software rasteriser is flagged, because its "GPU" path can be
    /// thousands of times slower than the CPU path and users must not mistake it for a GPU.
    pub fn describe(&self) -> String {
        let name = if self.adapter_info.name.is_empty() { "unnamed adapter" } else { self.adapter_info.name.as_str() };
        let text = format!("{name} / {:?}", self.adapter_info.backend).to_lowercase();
        if self.is_software() {
            format!("{text} (software adapter, slow)")
        } else {
            text
        }
    }

    /// Whether the adapter is a software rasteriser: wgpu reports a CPU device type, or the name
    /// or driver is one of the known ones (llvmpipe/lavapipe, SwiftShader, WARP) where the type is not given.
    pub fn is_software(&self) -> bool {
        let i = &self.adapter_info;
        // The browser's WebGPU may leave the name empty and the type unknown; its driver strings
        // can still say SwiftShader.
        let text = format!("{} {} {}", i.name, i.driver, i.driver_info).to_lowercase();
        i.device_type == wgpu::DeviceType::Cpu || ["llvmpipe", "lavapipe", "swiftshader", "microsoft basic render"].iter().any(|k| text.contains(k))
    }

    /// Checks that a storage buffer of `bytes` fits this device's limits.
    pub fn check_storage_size(&self, what: &str, bytes: u64) -> Result<(), GpuError> {
        let limit = self.limits.max_storage_buffer_binding_size.min(self.limits.max_buffer_size);
        if bytes > limit {
            return Err(GpuError::TooLarge { what: what.to_owned(), needed: bytes, limit });
        }
        Ok(())
    }

    /// Builds a compute pipeline from a registry shader, turning validation errors into [`GpuError`].
    pub async fn compute_pipeline(&self, shader_path: &str, entry_point: &str) -> Result<wgpu::ComputePipeline, GpuError> {
        // Libraries named by `// requires:` header lines are prepended (e.g. the df64 arithmetic).
        let source = crate::shaders::resolved_source(shader_path)?;
        self.pipeline_from_wgsl(shader_path, source, entry_point).await
    }

    /// Builds a compute pipeline (automatic layout) from WGSL text; `label` names it in errors.
    pub(crate) async fn pipeline_from_wgsl(&self, label: &str, source: std::borrow::Cow<'_, str>, entry_point: &str) -> Result<wgpu::ComputePipeline, GpuError> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some(label), source: wgpu::ShaderSource::Wgsl(source) });
        let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: None,
            module: &module,
            entry_point: Some(entry_point),
            compilation_options: Default::default(),
            cache: None,
        });
        match scope.pop().await {
            None => Ok(pipeline),
            Some(e) => Err(GpuError::Device { operation: format!("{label} pipeline"), message: e.to_string() }),
        }
    }

    /// Submits `commands`, reporting any validation/out-of-memory error they raise.
    pub async fn submit_checked(&self, operation: &str, commands: wgpu::CommandBuffer) -> Result<(), GpuError> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        self.queue.submit(Some(commands));
        match scope.pop().await {
            None => Ok(()),
            Some(e) => Err(GpuError::Device { operation: operation.to_owned(), message: e.to_string() }),
        }
    }
}
