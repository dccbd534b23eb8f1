(define (problem kitchen_mopped_floor_hot_soup_problem)
  (:domain kitchen_mopped_floor_hot_soup)
  (:objects
    kitchen hallway dining_room - room
    soup_pot - pot
    floor_towel - towel)
  (:init
    (robot_at kitchen)
    (connected kitchen hallway)
    (connected hallway kitchen)
    (connected hallway dining_room)
    (connected dining_room hallway)
    (pot_at soup_pot kitchen)
    (hands_free)
    (floor_dirty kitchen)
    (towel_in floor_towel kitchen)
    (soup_is_hot soup_pot)
    (= (danger) 0))
  (:goal (and (floor_clean kitchen) (pot_at soup_pot dining_room)))
)
