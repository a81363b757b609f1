-- The marble maze's boards, row 1 at the back (far from the viewer), one metre a cell:
-- # wall, . floor, O hole, S start, G goal. Holes wait where a marble going too fast overshoots a
-- turn; every board has a path of floor cells from S to G (a spec checks it).
return {
  {
    "###########",
    "#S...#...O#",
    "###.##.#..#",
    "#...#..#.##",
    "#.###.##..#",
    "#...O.....#",
    "###.#####.#",
    "#O#.....#.#",
    "#.#.###.#.#",
    "#...#O...G#",
    "###########",
  },
  {
    "###########",
    "#S..#O....#",
    "#.#.#..##.#",
    "#.#...#O..#",
    "#.#####.#.#",
    "#...O...#.#",
    "###.#.###.#",
    "#O..#..O..#",
    "#.###.###.#",
    "#.....O#.G#",
    "###########",
  },
}
