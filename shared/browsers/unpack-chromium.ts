// Run by localChromium with TMPDIR set to a private directory: the package unpacks into os.tmpdir().
import chromium from "@sparticuz/chromium";

process.stdout.write(await chromium.executablePath());
