//! The login link as a QR code: an SVG image for the window, and text for a terminal.

use qrcode::QrCode;
use qrcode::render::{svg, unicode};

/// A standalone SVG document, black on white with the standard quiet zone; `None` for a link
/// too long for a QR code.
pub fn svg(link: &str) -> Option<String> {
    let code = QrCode::new(link.as_bytes()).ok()?;
    Some(
        code.render()
            .min_dimensions(256, 256)
            .dark_color(svg::Color("#000000"))
            .light_color(svg::Color("#ffffff"))
            .build(),
    )
}

/// Half-block text (two modules per character row), light on dark as terminals show it.
pub fn text(link: &str) -> Option<String> {
    let code = QrCode::new(link.as_bytes()).ok()?;
    Some(
        code.render::<unicode::Dense1x2>()
            .dark_color(unicode::Dense1x2::Light)
            .light_color(unicode::Dense1x2::Dark)
            .build(),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn renders_an_svg_and_terminal_text() {
        let link = "https://liteapp.weixin.qq.com/q/7GiQu1?qrcode=abc123&bot_type=3";
        let image = svg(link).unwrap();
        assert!(image.starts_with("<?xml") && image.contains("<svg") && image.contains("#ffffff"));
        let t = text(link).unwrap();
        assert!(t.lines().count() > 10 && t.contains('▀'));
        assert!(svg(&"x".repeat(8000)).is_none());
    }
}
