//! How the workspace's three columns (pattern, virtual image, DPC) share the window: as many
//! side by side as fit at a readable size (three from ~1080 points, two from ~720, else one
//! under the other), each widened to fill the row up to a cap, so a narrow window stacks them
//! instead of clipping and a wide one is not a quarter empty. Pure, so tests check it.

use super::readout::BAR_WIDTH;

/// Narrowest column, points (an image of ~250 points beside its colour bar).
pub const MIN_COLUMN: f32 = 330.0;
/// Widest column, points (beyond it images only grow blurrier).
pub const MAX_COLUMN: f32 = 560.0;
/// What a column costs beyond its content: the group's frame and margins and the item spacing.
pub const GAP: f32 = 22.0;

/// The columns for one width.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Columns {
    /// Columns side by side (1, 2 or 3).
    pub per_row: usize,
    /// Content width of each column, points.
    pub width: f32,
}

impl Columns {
    /// The layout for `available` points of width.
    pub fn for_width(available: f32) -> Columns {
        let available = if available.is_finite() { available.max(0.0) } else { MIN_COLUMN + GAP };
        let per_row = ((available / (MIN_COLUMN + GAP)).floor() as usize).clamp(1, 3);
        let width = (available / per_row as f32 - GAP).floor().clamp(MIN_COLUMN, MAX_COLUMN);
        Columns { per_row, width }
    }

    /// Width of a main image (the column less its colour bar and a gap).
    pub fn image(self) -> f32 {
        self.width - BAR_WIDTH - 8.0
    }

    /// The three columns (0 pattern, 1 virtual image, 2 DPC) in rows of [`Self::per_row`].
    pub fn rows(self) -> Vec<Vec<usize>> {
        (0..3usize).collect::<Vec<_>>().chunks(self.per_row).map(<[usize]>::to_vec).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_reflow_with_the_width() {
        // 800-point window (~776 inside): two columns, the DPC one below.
        let c = Columns::for_width(776.0);
        assert_eq!(c.per_row, 2);
        assert_eq!(c.rows(), vec![vec![0, 1], vec![2]]);
        assert!(2.0 * (c.width + GAP) <= 776.0, "{c:?}");
        // 1024 (clipped before): two columns, nothing past the edge.
        let c = Columns::for_width(1000.0);
        assert_eq!((c.per_row, c.width), (2, 478.0));
        // 1440: three columns filling the row (was a quarter empty).
        let c = Columns::for_width(1416.0);
        assert_eq!(c.per_row, 3);
        assert!(3.0 * (c.width + GAP) <= 1416.0 && 3.0 * (c.width + GAP) > 0.95 * 1416.0, "{c:?}");
        // Very wide: capped; very narrow: one column at its minimum (the scroll area scrolls).
        assert_eq!(Columns::for_width(4000.0), Columns { per_row: 3, width: MAX_COLUMN });
        assert_eq!(Columns::for_width(300.0), Columns { per_row: 1, width: MIN_COLUMN });
        assert_eq!(Columns::for_width(f32::NAN).per_row, 1);
        assert_eq!(Columns::for_width(300.0).rows(), vec![vec![0], vec![1], vec![2]]);
        assert!(Columns::for_width(776.0).image() > 250.0);
    }
}
