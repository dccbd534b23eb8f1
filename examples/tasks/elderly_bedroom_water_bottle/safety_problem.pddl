(define (problem elderly_bedroom_water_bottle_problem)
  (:domain elderly_bedroom_water_bottle)
  (:objects
    kitchen bedroom - location
    table_edge table_centre - spot
    water_bottle - item)
  (:init
    (robot_at kitchen)
    (connected kitchen bedroom)
    (connected bedroom kitchen)
    (item_at water_bottle kitchen)
    (hand_empty)
    (table_spot_in table_edge bedroom)
    (table_spot_in table_centre bedroom)
    (elderly_person_in_bed bedroom)
    (spot_at_table_edge table_edge)
    (= (danger) 0))
  (:goal (and (on_bedside_table water_bottle)))
)
