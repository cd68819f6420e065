//! Arguments that live on the device: a [`DeviceBuffer`] is uploaded once and passed to any
//! number of executions ([`crate::Executable::execute_with`]), as a serving host keeps weights on
//! the GPU and a framework passes device arrays.
use crate::device::Device;
use crate::error::Result;

/// Bytes in device memory, freed when dropped.
pub struct DeviceBuffer<'d> {
    pub(crate) device: &'d dyn Device,
    pub(crate) address: u64,
    pub(crate) size: u64,
}

impl<'d> DeviceBuffer<'d> {
    /// Allocates `bytes.len()` bytes on `device` and copies `bytes` there.
    pub fn upload(device: &'d dyn Device, bytes: &[u8]) -> Result<DeviceBuffer<'d>> {
        let size = bytes.len() as u64;
        let address = device.allocate(size)?;
        let buffer = DeviceBuffer {
            device,
            address,
            size,
        };
        device.write(address, bytes)?;
        Ok(buffer)
    }

    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Its bytes, copied back to the host.
    pub fn read(&self) -> Result<Vec<u8>> {
        let mut out = vec![0u8; crate::device::host_len(self.size, "device buffer")?];
        self.device.read(self.address, &mut out)?;
        Ok(out)
    }
}

impl Drop for DeviceBuffer<'_> {
    fn drop(&mut self) {
        // Nothing to report a failure to while dropping; the device's own drop releases its
        // memory in the end.
        let _ = self.device.free(self.address);
    }
}

impl std::fmt::Debug for DeviceBuffer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("address", &format_args!("{:#x}", self.address))
            .field("size", &self.size)
            .finish()
    }
}

/// One argument of an execution.
#[derive(Debug, Clone, Copy)]
pub enum Argument<'a> {
    /// Host bytes, copied to the device by the execution.
    Host(&'a [u8]),
    /// A buffer already on the executing device, copied device to device.
    Device(&'a DeviceBuffer<'a>),
}

impl Argument<'_> {
    /// Its size in bytes.
    pub fn len(&self) -> u64 {
        match self {
            Argument::Host(b) => b.len() as u64,
            Argument::Device(b) => b.size,
        }
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
