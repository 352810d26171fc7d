"""Stage 09's tiled_partition<kTileSize>(block): a block of the stage's default size cut
into thread_block_tile groups, with each tile's meta_group_rank() and each thread's
thread_rank(); below it, a block that is not a whole number of tiles, which the
library partitions all the same (its last tile is partial)."""

FIGURE = "tile_partition.png"
ABOUT = "stage 09: a block cut into thread_block_tile<32> groups, and a block with a partial last tile"

ODD_BLOCK = 48  # a block size that is not a whole number of tiles (the runner refuses it)


def inputs(dg, root, results):
    path, _, _ = dg.stage_source(root, "09")
    tile = dg.code_constant(root, path, "kTileSize")
    block_line = dg.require_line(root, path, r"s\.blocks\.preferred\s*=\s*\d+;")
    block = int(block_line.split("=")[1].strip(" ;"))
    partition = dg.require_line(root, path, r"cg::tiled_partition<kTileSize>\(block\);")
    store = dg.require_line(root, path, r"tile_sums\[tile\.meta_group_rank\(\)\] = v;")
    if block % tile:
        raise dg.DiagramError(f"{path}: the preferred block {block} is not a whole number of tiles.")
    if ODD_BLOCK % tile == 0:
        raise dg.DiagramError("ODD_BLOCK must not be a multiple of the tile size.")
    return {"source": path, "tile": tile, "block": block, "odd_block": ODD_BLOCK, "code": [partition, store]}


def draw(dg, plt, d):
    tile, block, odd = d["tile"], d["block"], d["odd_block"]
    tiles = block // tile
    cell, left = 0.17, 0.6
    width = left + block * cell + 0.8
    c = dg.Canvas(plt, width, 18.2, 0.25)
    c.text(0.4, 0.8, f"Stage 09: tiled_partition<{tile}>(block) cuts a block of {block} threads into {tiles} tiles "
           f"of {tile}", size=11, ha="left", weight="bold")
    c.code(0.4, 1.8, "   ".join(d["code"]), size=7, color=dg.GREY)
    c.code(0.4, 2.6, d["source"], size=7, color=dg.GREY)
    colours = [dg.BLUE, dg.SKY]

    def row(y, threads, title):
        c.text(left, y, title, size=8.5, ha="left", weight="bold")
        y += 1.6
        count = -(-threads // tile)
        for t in range(count):
            x0 = left + t * tile * cell
            there = min(tile, threads - t * tile)
            c.text(x0 + tile * cell / 2, y, f"tile {t}", size=7.5, weight="bold")
            c.text(x0 + tile * cell / 2, y + 0.8, f"meta_group_rank() = {t}", size=6.5)
            c.box(x0, y + 1.5, there * cell, 1.2, face=colours[t % 2], edge=dg.INK, lw=0.5)
            for r in range(1, there):
                c.line(x0 + r * cell, y + 1.5, x0 + r * cell, y + 2.7, color="white", lw=0.3)
            if there < tile:
                c.box(x0 + there * cell, y + 1.5, (tile - there) * cell, 1.2, face="white", edge=dg.VERMILLION, lw=0.8,
                      dashed=True, text="missing", size=6.5, color=dg.VERMILLION)
            c.text(x0 + tile * cell / 2, y + 3.3, f"thread_rank() 0-{there - 1}", size=6, color=dg.GREY)
        return y + 4.3

    y = row(3.8, block, f"A block of {block} threads (the stage's default): meta_group_size() = {tiles}")
    c.text(left, y, f"Every tile is one warp; shfl_down in a tile names all {tile} lanes, and all {tile} are there.",
           size=7.5, ha="left")
    partial = odd - (odd // tile) * tile
    y = row(y + 1.4, odd, f"A block of {odd} threads: meta_group_size() = {-(-odd // tile)}, and tile "
            f"{odd // tile} has {partial} threads")
    c.text(left, y, f"Nothing refuses it: tile {odd // tile}'s num_threads() still says {tile} and its shuffles still "
           f"name all {tile} lanes, but lanes {partial}-{tile - 1} do not exist, so what those shuffles "
           "return is undefined.", size=7.5, ha="left", color=dg.VERMILLION)
    return c
