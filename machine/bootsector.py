"""The BIOS boot code of the stick image, written without grub-install (which needs a block
device): GRUB's boot.img in the MBR pointing at core.img in the gap before the partition,
core.img's first sector (diskboot) pointing at the rest of itself. The offsets are GRUB's
(include/grub/i386/pc/boot.h, kernel.h), the same grub-bios-setup writes."""
import struct

SECTOR = 512
KERNEL_SECTOR = 0x5C  # boot.img: where core.img starts (LBA, u64)
DRIVE_CHECK = 0x66  # boot.img: a jump that trusts a floppy's drive number; NOPed for disks
PART_TABLE = 0x1BE  # the MBR partition table: four 16-byte entries, then 55 aa
BLOCKLIST = SECTOR - 12  # diskboot: {start u64, len u16, segment u16} at the sector's end
CORE_SECTOR = 1  # core.img sits right after the MBR


def partition_entry(start: int, sectors: int, kind: int = 0x0C, bootable: bool = True) -> bytes:
    """One MBR partition entry in LBA form (CHS fields at their LBA-only maximum)."""
    return struct.pack("<B3sB3sII", 0x80 if bootable else 0, b"\xfe\xff\xff", kind,
                       b"\xfe\xff\xff", start, sectors)


def mbr(boot_img: bytes, entry: bytes) -> bytes:
    """The first sector: GRUB's boot code, pointed at core.img, with one partition."""
    if len(boot_img) != SECTOR:
        raise ValueError(f"boot.img is {len(boot_img)} bytes, not {SECTOR}")
    b = bytearray(boot_img)
    struct.pack_into("<Q", b, KERNEL_SECTOR, CORE_SECTOR)
    struct.pack_into("<H", b, DRIVE_CHECK, 0x9090)
    b[PART_TABLE:PART_TABLE + 64] = entry + bytes(48)
    b[510:512] = b"\x55\xaa"
    return bytes(b)


def core(core_img: bytes, room_sectors: int) -> bytes:
    """core.img padded to whole sectors, its diskboot blocklist naming the sectors after it."""
    data = bytearray(core_img + bytes(-len(core_img) % SECTOR))
    sectors = len(data) // SECTOR
    if sectors > room_sectors:
        raise ValueError(f"core.img is {sectors} sectors; the gap before the partition has "
                         f"{room_sectors}")
    start, length, segment = struct.unpack_from("<QHH", data, BLOCKLIST)
    struct.pack_into("<QHH", data, BLOCKLIST, CORE_SECTOR + 1, sectors - 1, segment)
    return bytes(data)
