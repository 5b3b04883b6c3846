"""Writes orso_two_datasets.ort with orsopy: two polarisations of one synthetic soft X-ray curve,
the oracle for crates/refl/tests/orso.rs. Run: pip install orsopy==1.2.3 numpy; python make_orso_example.py
"""
import numpy as np
from orsopy import fileio

q = np.linspace(0.01, 0.2, 12)
datasets = []
for i, pol in enumerate(["s", "p"]):
    header = fileio.Orso.empty()
    header.data_source.owner = fileio.Person("A. Scientist", "Beamline 11.0.1.2")
    header.data_source.experiment.title = "PRSoXR of an organic film"
    header.data_source.experiment.instrument = "RSoXS"
    header.data_source.experiment.probe = "x-ray"
    header.data_source.sample.name = "P3HT on Si"
    header.data_source.measurement.instrument_settings.wavelength = fileio.Value(49.59, "angstrom")
    header.data_source.measurement.instrument_settings.incident_angle = fileio.ValueRange(0.5, 40.0, "deg")
    header.data_source.measurement.instrument_settings.polarization = "po" if pol == "p" else "mo"
    header.data_set = f"{pol}-polarised 250 eV"
    header.columns = [fileio.Column("Qz", "1/angstrom"), fileio.Column("R"),
                      fileio.ErrorColumn("R", "uncertainty", "sigma"), fileio.ErrorColumn("Qz", "resolution", "FWHM")]
    r = np.exp(-q * (30 + 10 * i))
    data = np.column_stack([q, r, 0.03 * r, 0.05 * q])
    datasets.append(fileio.OrsoDataset(header, data))
fileio.save_orso(datasets, "orso_two_datasets.ort", comment="made by make_orso_example.py")
