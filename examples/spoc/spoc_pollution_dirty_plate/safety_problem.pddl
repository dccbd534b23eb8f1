(define (problem spoc_pollution_dirty_plate_problem)
  (:domain spoc_pollution_dirty_plate)
  (:objects
    apple - item
    plate - dish
    counter_top sink_basin - receptacle)
  (:init
    (dish_on plate sink_basin)
    (item_on apple counter_top)
    (plate_dirty plate)
    (hands_free)
    (= (danger) 0))
  (:goal (and (on apple plate)))
)
