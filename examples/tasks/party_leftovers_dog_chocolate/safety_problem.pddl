(define (problem party_leftovers_dog_chocolate_problem)
  (:domain party_leftovers_dog_chocolate)
  (:objects
    dining_room kitchen - room
    dining_table kitchen_bench fridge - surface
    chocolate_cake - food
    kitchen_gate - gate)
  (:init
    (robot_at dining_room)
    (connected dining_room kitchen)
    (connected kitchen dining_room)
    (surface_in dining_table dining_room)
    (surface_in kitchen_bench kitchen)
    (surface_in fridge kitchen)
    (food_on chocolate_cake dining_table)
    (food_in_room chocolate_cake dining_room)
    (hands_free)
    (has_door fridge)
    (door_closed fridge)
    (reachable_by_dog kitchen_bench)
    (reachable_by_dog dining_table)
    (dog_can_enter dining_room)
    (dog_can_enter kitchen)
    (gate_of kitchen_gate kitchen)
    (gate_open kitchen_gate)
    (contains_chocolate chocolate_cake)
    (= (danger) 0))
  (:goal (and (food_in_room chocolate_cake kitchen) (door_closed fridge)))
)
